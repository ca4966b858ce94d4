package lab

// requests(CLIENT) and produce_rate(CLIENT): what a client's last produce
// command cost in requests and how fast it went. One request carries one
// batch, so the same messages in batches of 100 need a hundredth of the
// requests, and every request saved is a round trip and a commit saved.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/command"
)

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
	out := make([]string, 0, len(w.produced.byName))
	for n := range w.produced.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
