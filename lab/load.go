package lab

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// Load states.
const (
	LoadWaiting = "waiting" // after= has not passed yet
	LoadRunning = "running"
	LoadStopped = "stopped" // finished, or stopped by load stop; nothing in flight
)

// defaultLoadClient is the client a load produces as unless as= names one.
const defaultLoadClient = "load"

// loadInFlight bounds the produce requests one generator has in flight:
// when they are all busy, the messages that fall due wait for the next one.
const loadInFlight = 8

// load is one background generator.
type load struct {
	cmd    command.Load
	client string
	total  int
	ctx    context.Context // ends when the load is stopped or the world retired
	halt   context.CancelFunc

	mu      sync.Mutex
	state   string
	started time.Time // lab time it began sending; zero while waiting
	counts  map[checker.Outcome]int
	sent    int
}

// LoadState is one generator as the screens show it.
type LoadState struct {
	Client       string  `json:"client"`
	Topic        string  `json:"topic"`
	Rate         float64 `json:"rate"` // messages per second of lab time
	Total        int     `json:"total"`
	Sent         int     `json:"sent"`
	Acknowledged int     `json:"acknowledged"`
	Rejected     int     `json:"rejected,omitempty"` // refused by a full queue
	Failed       int     `json:"failed"`
	Unknown      int     `json:"unknown"`
	State        string  `json:"state"`
}

func (ld *load) snapshot() LoadState {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return LoadState{Client: ld.client, Topic: ld.cmd.Topic, Rate: ld.cmd.Rate, Total: ld.total, Sent: ld.sent,
		Acknowledged: ld.counts[checker.Acknowledged] + ld.counts[checker.Sent], Rejected: ld.counts[checker.Rejected], Failed: ld.counts[checker.Failed],
		Unknown: ld.counts[checker.Unknown], State: ld.state}
}

func (r *run) load(ctx context.Context, c command.Load) error {
	if handled, err := r.loadQueue(ctx, c); handled {
		return err
	}
	cl, p, err := r.produceSetup(ctx, "load", c.Topic, c.As, defaultLoadClient, c.Acks, c.Idempotent, c.Batch)
	if err != nil {
		return err
	}
	total, err := loadTotal("load", c)
	if err != nil {
		return err
	}
	r.startLoad(c, cl, total, func(ld *load) sendBatch { return r.l.produceBatches(r.w, ld, cl, p) })
	r.say(EventLoad, "load %s: %d messages as %s, %s/s of lab time for %v%s", c.Topic, total, cl.name, trimFloat(c.Rate), c.For, afterText(c.After))
	return nil
}

// loadTotal is how many messages a load sends: its rate for its time.
func loadTotal(verb string, c command.Load) (int, error) {
	total := int(math.Round(c.Rate * c.For.Seconds()))
	if total < 1 {
		return 0, fmt.Errorf("%s: rate=%s/s for=%v makes no messages; raise the rate or the time", verb, trimFloat(c.Rate), c.For)
	}
	return total, nil
}

// startLoad registers a load of total messages sent as cl and starts its
// generator, which sends the batches batches makes.
func (r *run) startLoad(c command.Load, cl *client, total int, batches func(*load) sendBatch) {
	ld := &load{cmd: c, client: cl.name, total: total, state: LoadWaiting, counts: map[checker.Outcome]int{}}
	r.w.loadClients.Store(cl.name, true)
	ld.ctx, ld.halt = context.WithCancel(r.w.ctx)
	if c.After == 0 {
		ld.state = LoadRunning
	}
	r.begin(c.String())
	r.w.mu.Lock()
	r.w.loads = append(r.w.loads, ld)
	r.w.loadWG.Add(1)
	r.w.mu.Unlock()
	go r.l.runLoad(r.w, ld, batches(ld))
}

func afterText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return fmt.Sprintf(", starting in %v", d)
}

// sendBatch prepares n messages numbered from first, in order, and returns
// what sends them and tells each one's outcome: a load's generator numbers
// its messages in turn and sends several batches at once.
type sendBatch func(first, n int) (send func() []checker.Outcome)

// produceBatches is a load's sendBatch onto a topic.
func (l *Lab) produceBatches(w *world, ld *load, cl *client, p *broker.Producer) sendBatch {
	c := ld.cmd
	return func(first, n int) func() []checker.Outcome {
		msgs, recs := w.prepare(cl, c.Topic, first, n, ackText(c.Acks), c.Idempotent, false, 0,
			keyFunc(c.Key, c.Keyed), valueFunc(c.Value, c.HasValue), l.clock.Now())
		return func() []checker.Outcome {
			res := p.Produce(w.ctx, msgs...)
			w.settle(recs, res, l.clock.Now())
			out := make([]checker.Outcome, len(res))
			for i, r := range res {
				out[i] = outcomeOf(r.Outcome)
				if r.Duplicate {
					// Rare, and the point of an idempotent producer: said
					// even though a load's messages are not told one by one.
					l.tl.Add(Event{Time: l.clock.Now(), Kind: EventLoad, Text: fmt.Sprintf(
						"load %s as %s: %s took %d attempts; the partition recognised the retry and answered with the original offset %d",
						c.Topic, ld.client, msgs[i].MsgID, r.Attempts, r.Offset)})
				}
			}
			return out
		}
	}
}

// runLoad sends the messages that fall due by lab time, so speed and pause
// apply, until all are sent or the load is stopped; then it waits for the
// answers of what it sent.
func (l *Lab) runLoad(w *world, ld *load, batch sendBatch) {
	defer w.loadWG.Done()
	defer ld.halt()
	gen := ld.ctx
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		ld.mu.Lock()
		ld.state = LoadStopped
		text := fmt.Sprintf("load %s as %s stopped: %d of %d sent; %s", ld.cmd.Topic, ld.client, ld.sent, ld.total, countText(ld.counts))
		ld.mu.Unlock()
		l.tl.Add(Event{Time: l.clock.Now(), Kind: EventLoad, Text: text})
	}()
	if ld.cmd.After > 0 {
		if l.clock.Sleep(gen, ld.cmd.After) != nil {
			return
		}
		ld.mu.Lock()
		ld.state = LoadRunning
		ld.mu.Unlock()
	}
	start := l.clock.Now()
	ld.mu.Lock()
	ld.started = start
	ld.mu.Unlock()
	slots := make(chan struct{}, loadInFlight)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	sent := 0
	for sent < ld.total {
		elapsed := l.clock.Now().Sub(start).Seconds()
		due := min(ld.total, int(ld.cmd.Rate*elapsed)+1)
		if due > sent {
			select {
			case slots <- struct{}{}:
				n := min(due-sent, 1000)
				send := batch(sent+1, n)
				sent += n
				ld.mu.Lock()
				ld.sent = sent
				ld.mu.Unlock()
				inflight.Add(1)
				go func() {
					defer inflight.Done()
					outcomes := send()
					ld.mu.Lock()
					for _, o := range outcomes {
						ld.counts[o]++
					}
					ld.mu.Unlock()
					<-slots
				}()
				continue
			default:
			}
		}
		select {
		case <-gen.Done():
			return
		case <-tick.C:
		}
	}
}

func ackText(a string) string {
	if a == "" {
		return "all"
	}
	return a
}

func countText(counts map[checker.Outcome]int) string {
	var parts []string
	for _, o := range []checker.Outcome{checker.Acknowledged, checker.Sent, checker.Rejected, checker.Failed, checker.Unknown} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	if len(parts) == 0 {
		return "no answers"
	}
	return strings.Join(parts, ", ")
}

func (r *run) loadStop(c command.LoadStop) error {
	r.w.mu.Lock()
	var hit []*load
	var names []string
	for _, ld := range r.w.loads {
		names = append(names, ld.client, ld.cmd.Topic)
		if c.Target == "" || ld.client == c.Target || ld.cmd.Topic == c.Target {
			hit = append(hit, ld)
		}
	}
	r.w.mu.Unlock()
	if c.Target != "" && len(hit) == 0 {
		if len(names) == 0 {
			return fmt.Errorf("load stop %s: no load has run", c.Target)
		}
		return fmt.Errorf("load stop %s: no load on a topic or as a client by that name%s", c.Target, didYouMean(c.Target, names))
	}
	r.begin(c.String())
	running := 0
	for _, ld := range hit {
		if ld.snapshot().State != LoadStopped {
			running++
		}
		ld.halt()
	}
	r.say(EventLoad, "%d load(s) told to stop; what they sent still gets its answers", running)
	return nil
}

// loadStates lists the generators, oldest first.
func (w *world) loadStates() []LoadState {
	w.mu.Lock()
	loads := append([]*load(nil), w.loads...)
	w.mu.Unlock()
	out := make([]LoadState, len(loads))
	for i, ld := range loads {
		out[i] = ld.snapshot()
	}
	return out
}
