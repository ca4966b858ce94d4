// Package loads is the lab's background generators: `load TOPIC|QUEUE
// rate=… for=…` sends messages as they fall due in lab time, so speed and
// pause apply, several batches at once, until all are sent or `load stop`
// ends it; then it waits for the answers of what it sent. Where the
// messages go (a topic through the lab's producer, a queue) and how each
// is recorded is the lab's: a load only numbers and paces them (Batches).
package loads

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/timeline"
)

// Load states.
const (
	Waiting = "waiting" // after= has not passed yet
	Running = "running"
	Stopped = "stopped" // finished, or stopped by load stop; nothing in flight
)

// DefaultClient is the client a load sends as unless as= names one.
const DefaultClient = "load"

// inFlight bounds the batches one generator has in flight: when they are
// all busy, the messages that fall due wait for the next one.
const inFlight = 8

// Batches prepares n messages numbered from first, in order, and returns
// what sends them and tells each one's outcome: a load's generator numbers
// its messages in turn and sends several batches at once.
type Batches func(first, n int) (send func() []checker.Outcome)

// State is one generator as the screens show it.
type State struct {
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

// Set is one world's generators.
type Set struct {
	w  family.World
	wg sync.WaitGroup

	mu    sync.Mutex
	loads []*load

	// clients holds the names of the clients loads send as: their
	// messages are too many to list one by one (see FromLoad).
	clients sync.Map
}

// New returns a world's set of generators, none running.
func New(w family.World) *Set { return &Set{w: w} }

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

func (ld *load) snapshot() State {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return State{Client: ld.client, Topic: ld.cmd.Topic, Rate: ld.cmd.Rate, Total: ld.total, Sent: ld.sent,
		Acknowledged: ld.counts[checker.Acknowledged] + ld.counts[checker.Sent], Rejected: ld.counts[checker.Rejected], Failed: ld.counts[checker.Failed],
		Unknown: ld.counts[checker.Unknown], State: ld.state}
}

// Total is how many messages a load sends: its rate for its time.
func Total(verb string, c command.Load) (int, error) {
	total := int(math.Round(c.Rate * c.For.Seconds()))
	if total < 1 {
		return 0, fmt.Errorf("%s: rate=%s/s for=%v makes no messages; raise the rate or the time", verb, timeline.Number(c.Rate), c.For)
	}
	return total, nil
}

// Start begins the command c, registers a load of total messages sent as
// client and starts its generator, which sends the batches batches makes;
// then it says so. onto says where they go beyond c's name (" onto the
// queue", or "").
func (s *Set) Start(r family.Run, c command.Load, client string, total int, batches Batches, onto string) {
	ld := &load{cmd: c, client: client, total: total, state: Waiting, counts: map[checker.Outcome]int{}}
	s.clients.Store(client, true)
	ld.ctx, ld.halt = context.WithCancel(s.w.Context())
	if c.After == 0 {
		ld.state = Running
	}
	r.Begin(c.String())
	s.mu.Lock()
	s.loads = append(s.loads, ld)
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(ld, batches)
	r.Say(timeline.Load, "load %s: %d messages as %s%s, %s/s of lab time for %v%s", c.Topic, total, client, onto, timeline.Number(c.Rate), c.For, afterText(c.After))
}

func afterText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return fmt.Sprintf(", starting in %v", d)
}

// run sends the messages that fall due by lab time, so speed and pause
// apply, until all are sent or the load is stopped; then it waits for the
// answers of what it sent.
func (s *Set) run(ld *load, batch Batches) {
	defer s.wg.Done()
	defer ld.halt()
	clock := s.w.Clock()
	gen := ld.ctx
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		ld.mu.Lock()
		ld.state = Stopped
		text := fmt.Sprintf("load %s as %s stopped: %d of %d sent; %s", ld.cmd.Topic, ld.client, ld.sent, ld.total, countText(ld.counts))
		ld.mu.Unlock()
		s.w.AddAlways(timeline.Event{Time: clock.Now(), Kind: timeline.Load, Text: text})
	}()
	if ld.cmd.After > 0 {
		if clock.Sleep(gen, ld.cmd.After) != nil {
			return
		}
		ld.mu.Lock()
		ld.state = Running
		ld.mu.Unlock()
	}
	start := clock.Now()
	ld.mu.Lock()
	ld.started = start
	ld.mu.Unlock()
	slots := make(chan struct{}, inFlight)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	// The claim holds lab time while messages that fell due are not
	// answered yet, so a busy machine slows the lab, not the load's rate.
	claim := clock.Claim()
	defer claim.Close()
	answered := 0 // guarded by ld.mu
	sent := 0
	for sent < ld.total {
		elapsed := clock.Now().Sub(start).Seconds()
		due := min(ld.total, int(ld.cmd.Rate*elapsed)+1)
		ld.mu.Lock()
		oldest := answered // the first message not answered, from 0
		ld.mu.Unlock()
		if oldest < due {
			claim.Behind(start.Add(time.Duration(float64(oldest) / ld.cmd.Rate * float64(time.Second))))
		} else {
			claim.Idle()
		}
		if due > sent {
			select {
			case slots <- struct{}{}:
				n := min(due-sent, jobSize(ld.cmd.Rate))
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
					answered += n
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

// jobSize is how many messages one of a generator's sends may carry: a
// few lab milliseconds' worth, so that its answers move its claim on lab
// time often enough to keep it (see clock.Grip), and no more than 1,000.
func jobSize(rate float64) int {
	return max(1, min(1000, int(rate*clock.Slack.Seconds()/4)))
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

// Stop runs load stop: it stops the loads on a topic or as a client of
// that name, or every load.
func (s *Set) Stop(r family.Run, c command.LoadStop) error {
	s.mu.Lock()
	var hit []*load
	var names []string
	for _, ld := range s.loads {
		names = append(names, ld.client, ld.cmd.Topic)
		if c.Target == "" || ld.client == c.Target || ld.cmd.Topic == c.Target {
			hit = append(hit, ld)
		}
	}
	s.mu.Unlock()
	if c.Target != "" && len(hit) == 0 {
		if len(names) == 0 {
			return fmt.Errorf("load stop %s: no load has run", c.Target)
		}
		return fmt.Errorf("load stop %s: no load on a topic or as a client by that name%s", c.Target, command.DidYouMean(c.Target, names))
	}
	r.Begin(c.String())
	running := 0
	for _, ld := range hit {
		if ld.snapshot().State != Stopped {
			running++
		}
		ld.halt()
	}
	r.Say(timeline.Load, "%d load(s) told to stop; what they sent still gets its answers", running)
	return nil
}

// States lists the generators, oldest first.
func (s *Set) States() []State {
	s.mu.Lock()
	loads := append([]*load(nil), s.loads...)
	s.mu.Unlock()
	out := make([]State, len(loads))
	for i, ld := range loads {
		out[i] = ld.snapshot()
	}
	return out
}

// FromLoad says whether a message id (CLIENT-N) is one a load sent. The
// timeline marks the per-message events of such messages as Detail: a
// load sends hundreds, and its own lines and the lab values sum them up.
func (s *Set) FromLoad(msgID string) bool {
	i := strings.LastIndexByte(msgID, '-')
	if i <= 0 {
		return false
	}
	_, ok := s.clients.Load(msgID[:i])
	return ok
}

// Close stops every generator and waits for them and their answers.
func (s *Set) Close() {
	s.mu.Lock()
	for _, ld := range s.loads {
		ld.halt()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
