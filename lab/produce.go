package lab

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
)

// produceSetup checks what a produce or load names and returns the client
// and producer to send with, so that nothing happens unless all is well.
func (r *run) produceSetup(ctx context.Context, verb, topic, as, defaultClient, acks string, idem bool, batch int) (*client, *broker.Producer, error) {
	if _, err := r.w.topic(topic); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", verb, err)
	}
	name := as
	if name == "" {
		name = defaultClient
	}
	if strings.HasPrefix(name, "_") {
		return nil, nil, fmt.Errorf("%s: client names cannot start with '_'", verb)
	}
	if acks == "" {
		acks = "all"
	}
	ba, err := broker.ParseAcks(acks)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", verb, err)
	}
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	cl, p, err := r.w.producer(ctx, name, producerKey{acks: ba, idempotent: idem, batch: batch})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", verb, err)
	}
	return cl, p, nil
}

// template expands {n} in a key or value.
func template(t string, n int) string { return strings.ReplaceAll(t, "{n}", strconv.Itoa(n)) }

func keyFunc(tpl string, keyed bool) func(int) ([]byte, bool) {
	return func(n int) ([]byte, bool) {
		if !keyed {
			return nil, false
		}
		return []byte(template(tpl, n)), true
	}
}

func valueFunc(tpl string, has bool) func(int, string) []byte {
	return func(n int, id string) []byte {
		if !has {
			return []byte(id)
		}
		return []byte(template(tpl, n))
	}
}

func (r *run) produce(ctx context.Context, c command.Produce) error {
	if c.Pinned {
		t, err := r.w.topic(c.Topic)
		if err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		if c.Partition >= len(t.Partitions) {
			return fmt.Errorf("produce: %w: %s has %s, not %d", broker.ErrUnknownPartition, c.Topic, command.PartitionsText(len(t.Partitions)), c.Partition)
		}
	}
	cl, p, err := r.produceSetup(ctx, "produce", c.Topic, c.As, defaultProducer, c.Acks, c.Idempotent, c.Batch)
	if err != nil {
		return err
	}
	acks := c.Acks
	if acks == "" {
		acks = "all"
	}
	r.begin(c.String())
	value := valueFunc(c.Value, c.HasValue)
	if c.Tombstone {
		value = func(int, string) []byte { return nil }
	}
	msgs, recs := r.w.prepare(cl, c.Topic, 1, c.Count, acks, c.Idempotent, c.Pinned, c.Partition,
		keyFunc(c.Key, c.Keyed), value, r.l.clock.Now())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	started := r.l.clock.Now()
	res := p.Produce(ctx, msgs...)
	r.w.settle(recs, res, r.l.clock.Now())
	r.w.produced.record(cl.name, newProduceRun(res, c.Batch, started, r.l.clock.Now()))
	if len(recs) <= family.ListEach {
		for i, rec := range recs {
			r.say(EventOutcome, "%s", describeProduce(*rec, res[i]))
		}
		return nil
	}
	r.say(EventOutcome, "%s", summarize(c.Topic, cl.name, recs))
	return nil
}

// describeProduce writes one message's fate:
// "producer-3 orders key=881 → acknowledged at orders/0 offset 3 epoch 2".
func describeProduce(p Produce, res broker.ProduceResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", p.MsgID, p.Topic)
	if p.Keyed {
		fmt.Fprintf(&b, " key=%s", p.Key)
	}
	fmt.Fprintf(&b, " → %s", p.Outcome)
	where := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
	switch p.Outcome {
	case checker.Acknowledged:
		if p.Offset >= 0 {
			fmt.Fprintf(&b, " at %s offset %d epoch %d", where, p.Offset, p.Epoch)
		} else {
			fmt.Fprintf(&b, " by %s", where)
		}
		if p.Acks == "1" {
			b.WriteString(" (acks=1: the leader has it; a majority may not)")
		}
	case checker.Sent:
		fmt.Fprintf(&b, " to %s (acks=0: no answer comes)", where)
	default:
		if res.Err != nil {
			fmt.Fprintf(&b, ": %v", res.Err)
		}
	}
	if p.Attempts > 1 {
		fmt.Fprintf(&b, "; %d attempts", p.Attempts)
	}
	if p.Duplicate {
		b.WriteString("; the partition recognised the retry and answered with the original offset")
	}
	return b.String()
}

// summarize counts outcomes and the offsets acknowledged per partition.
func summarize(topic, client string, recs []*Produce) string {
	counts := map[checker.Outcome]int{}
	type span struct{ lo, hi int64 }
	spans := map[int]*span{}
	for _, p := range recs {
		counts[p.Outcome]++
		if p.Outcome == checker.Acknowledged && p.Offset >= 0 {
			s := spans[p.Partition]
			if s == nil {
				spans[p.Partition] = &span{p.Offset, p.Offset}
				continue
			}
			s.lo, s.hi = min(s.lo, p.Offset), max(s.hi, p.Offset)
		}
	}
	var parts []string
	for _, o := range []checker.Outcome{checker.Acknowledged, checker.Sent, checker.Failed, checker.Unknown, checker.Pending} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	var ps []int
	for p := range spans {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	var where []string
	for _, p := range ps {
		where = append(where, fmt.Sprintf("%s/%d offsets %d–%d", topic, p, spans[p].lo, spans[p].hi))
	}
	s := fmt.Sprintf("%d messages from %s to %s: %s", len(recs), client, topic, strings.Join(parts, ", "))
	if len(where) > 0 {
		s += " (" + strings.Join(where, ", ") + ")"
	}
	return s
}

// requests(CLIENT) and produce_rate(CLIENT): what a client's last produce
// command cost in requests and how fast it went. One request carries one
// batch, so the same messages in batches of 100 need a hundredth of the
// requests, and every request saved is a round trip and a commit saved.

// produceRun is what one produce command came to.
type produceRun struct {
	messages int       // messages the command produced
	acked    int       // of them, acknowledged by the broker
	requests int       // produce requests sent, retries included
	repeats  int       // messages a partition recognised as a retry of a write it had, and answered with the original offset
	started  time.Time // lab time the first request could go
	ended    time.Time // lab time the last answer was in
}

// produceStats keeps each client's last produce command; its zero value is
// ready to use.
type produceStats struct {
	mu     sync.Mutex
	byName map[string]produceRun
}

func (s *produceStats) record(client string, pr produceRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byName == nil {
		s.byName = map[string]produceRun{}
	}
	s.byName[client] = pr
}

func (s *produceStats) last(client string) (produceRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, ok := s.byName[client]
	return pr, ok
}

// newProduceRun counts what a produce command's results came to. The
// producer sends each partition's messages in order, batch at a time, and
// every message of a batch carries its batch's attempts: so the requests
// are the attempts of each batch's first message. A message that was never
// routed to a partition carries none.
func newProduceRun(res []broker.ProduceResult, batch int, started, ended time.Time) produceRun {
	batch = max(batch, 1)
	pr := produceRun{messages: len(res), started: started, ended: ended}
	seen := map[int]int{} // partition → its messages so far
	for _, r := range res {
		if r.Outcome == broker.OutcomeAcked {
			pr.acked++
		}
		if r.Duplicate {
			pr.repeats++
		}
		if r.Attempts == 0 {
			continue
		}
		if seen[r.Partition]%batch == 0 {
			pr.requests += r.Attempts
		}
		seen[r.Partition]++
	}
	return pr
}

// produceValue reads requests(CLIENT), recognised(CLIENT), latency(CLIENT)
// or produce_rate(CLIENT) from the
// client's last produce command, or speedup(A, B): A's rate over B's.
func (w *world) produceValue(v command.Value) (any, error) {
	if v.Func == "speedup" {
		a, err := w.produceRate(v, v.Arg)
		if err != nil {
			return nil, err
		}
		b, err := w.produceRate(v, v.Other)
		if err != nil {
			return nil, err
		}
		if b == 0 {
			return nil, fmt.Errorf("%s: %s got no message acknowledged in its last produce, so no rate is a multiple of it", v, v.Other)
		}
		return a / b, nil
	}
	pr, err := w.lastProduceRun(v, v.Arg)
	if err != nil {
		return nil, err
	}
	switch v.Func {
	case "requests":
		return float64(pr.requests), nil
	case "recognised":
		return float64(pr.repeats), nil
	case "latency":
		if pr.requests == 0 {
			return nil, fmt.Errorf("%s: %s's last produce sent no request", v, v.Arg)
		}
		ms := float64(pr.ended.Sub(pr.started).Microseconds()) / 1000 / float64(pr.requests)
		return math.Round(ms*10) / 10, nil
	case "produce_rate":
		rate, err := w.produceRate(v, v.Arg)
		if err != nil {
			return nil, err
		}
		if rate >= 10 {
			rate = math.Round(rate) // a reader wants 26398 a second, not 26398.28
		}
		return rate, nil
	}
	return nil, fmt.Errorf("%s: the lab cannot read this value", v)
}

// recognisedAll reads recognised_all(CLIENT): of every message the client
// has produced, by commands and by loads, the ones a partition recognised
// as a retry. A load's messages are not told one by one, so this is how a
// lesson sees that a load's retry across a failover was answered, not
// written twice.
func (w *world) recognisedAll(v command.Value) (any, error) {
	if !w.hasClient(v.Arg) {
		return nil, unnamedYet{fmt.Errorf("%s: no client named %q has produced yet; produce or load with as=%s makes one", v, v.Arg, v.Arg)}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.history {
		if p.Client == v.Arg && p.Duplicate {
			n++
		}
	}
	return float64(n), nil
}

// lastProduce is client's last produce command, or why there is none.
func (w *world) lastProduceRun(v command.Value, client string) (produceRun, error) {
	if pr, ok := w.produced.last(client); ok {
		return pr, nil
	}
	if w.hasClient(client) {
		return produceRun{}, notNow(fmt.Errorf("%s: %s has run no produce command yet; produce TOPIC as=%s count=N batch=N gives it one", v, client, client))
	}
	names := w.producerNames()
	if len(names) == 0 {
		return produceRun{}, unnamedYet{fmt.Errorf("%s: no client has produced yet; produce TOPIC as=%s count=N batch=N makes one", v, client)}
	}
	return produceRun{}, unnamedYet{fmt.Errorf("%s: no client named %q has produced; the clients that have are %s%s", v, client, strings.Join(names, ", "), didYouMean(client, names))}
}

// produceRate is the messages per second of lab time acknowledged in
// client's last produce command.
func (w *world) produceRate(v command.Value, client string) (float64, error) {
	pr, err := w.lastProduceRun(v, client)
	if err != nil {
		return 0, err
	}
	took := pr.ended.Sub(pr.started).Seconds()
	if took <= 0 {
		return 0, fmt.Errorf("%s: no lab time passed during %s's last produce (lab time was paused), so it has no rate; resume, then produce again", v, client)
	}
	return float64(pr.acked) / took, nil
}

// producerNames lists the clients that have run a produce command, sorted.
func (w *world) producerNames() []string {
	w.produced.mu.Lock()
	defer w.produced.mu.Unlock()
	return slices.Sorted(maps.Keys(w.produced.byName))
}
