package lab

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// listEach is how many messages a produce describes one by one; beyond it,
// one summary line.
const listEach = 10

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
	msgs, recs := r.w.prepare(cl, c.Topic, 1, c.Count, acks, c.Idempotent, c.Pinned, c.Partition,
		keyFunc(c.Key, c.Keyed), valueFunc(c.Value, c.HasValue), r.l.clock.Now())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	started := r.l.clock.Now()
	res := p.Produce(ctx, msgs...)
	r.w.settle(recs, res, r.l.clock.Now())
	r.w.produced.record(cl.name, newProduceRun(res, c.Batch, started, r.l.clock.Now()))
	if len(recs) <= listEach {
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
