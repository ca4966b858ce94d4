// Package checkout is the lab's family of commands that sends buyers
// through the checkout service (lab/services.Checkout) in the background,
// `buyers rate=… for=…` and `buyers stop`, and reads the checkout's
// measurements as lab values: p50(checkout), p99(checkout),
// arrived(checkout), answered(checkout), served(checkout),
// errors(checkout), no_thread(checkout), charged_but_failed(checkout),
// busy(checkout) and waiting(checkout).
//
// Each buyer is its own request on its own goroutine, arriving on the lab
// clock, so speed and pause apply. A buyer goes to whichever checkout runs
// when it arrives; with none running it is turned away. While buyers are
// in flight, the checkout's and the payments' per-buyer events (their SQL,
// each answer, each charge) are detail (Quiet), and so are the routine
// queue events of the messages the checkout sent for buyers (Routine), so
// that the timeline keeps one progress line per second of lab time
// instead of hundreds.
package checkout

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
)

// progressEvery is how often, in lab time, a buyers run reports.
const progressEvery = time.Second

// Buyers is one world's buyers runs.
type Buyers struct {
	w family.World
	// running is the checkout service running now, or why there is none.
	running func() (*services.Checkout, error)
	wg      sync.WaitGroup

	mu     sync.Mutex
	runs   []*buyersRun
	next   int64 // the next buyer's order id
	active int   // runs with buyers still in flight
}

var _ family.Family = (*Buyers)(nil)

// New returns a world's buyers, none sent yet; running finds the checkout
// service a buyer goes to.
func New(w family.World, running func() (*services.Checkout, error)) *Buyers {
	return &Buyers{w: w, running: running, next: 1}
}

// Quiet reports whether a service's per-buyer events are detail now.
func (bs *Buyers) Quiet(service string, kind services.EventKind) bool {
	if service != "checkout" && service != "payments" {
		return false
	}
	switch kind {
	case services.EventCrashed, services.EventRestarted:
		return false
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.active > 0
}

// Routine reports whether a broker event is the routine handling of a
// buyer's message (sent, delivered, acked): detail, like the buyers' own
// events. Redeliveries, timeouts and dead letters stay in the timeline.
func (bs *Buyers) Routine(e broker.Event) bool {
	switch e.Kind {
	case broker.EventQueueSend, broker.EventQueueDeliver, broker.EventQueueAck:
	default:
		return false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(e.MsgID, "checkout-"), 10, 64)
	if err != nil || !strings.HasPrefix(e.MsgID, "checkout-") {
		return false
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return n >= 1 && n < bs.next
}

// Close waits for every run's buyers; the world's context must have ended.
func (bs *Buyers) Close() { bs.wg.Wait() }

// buyersRun is one buyers command.
type buyersRun struct {
	cmd   command.Buyers
	total int
	first int64
	// arrivals ends when buyers stop stops the run or the world is retired;
	// buyers already at the checkout carry on under the world's context.
	arrivals context.Context
	halt     context.CancelFunc

	mu                                  sync.Mutex
	arrived, served, errorPages, turned int
	charged                             int // error pages after paying
	firstTurnedAway                     string
}

// Exec runs buyers and buyers stop.
func (bs *Buyers) Exec(_ context.Context, r family.Run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.Buyers:
		return bs.start(r, c)
	case command.BuyersStop:
		return bs.stop(r)
	}
	return fmt.Errorf("%s: the checkout has no handler for this command", cmd.Name())
}

// stop stops the arrivals of every buyers run; the buyers already at the
// checkout get their answers.
func (bs *Buyers) stop(r family.Run) error {
	bs.mu.Lock()
	runs := slices.Clone(bs.runs)
	bs.mu.Unlock()
	if len(runs) == 0 {
		return fmt.Errorf("buyers stop: no buyers have been sent; buyers rate=10/s for=5s sends some")
	}
	r.Begin("buyers stop")
	stopped := 0
	for _, br := range runs {
		br.mu.Lock()
		left := br.total - br.arrived
		br.mu.Unlock()
		if br.arrivals.Err() == nil && left > 0 {
			stopped += left
		}
		br.halt()
	}
	r.Say(timeline.Load, "buyers stop: %d buyers will not arrive; those at the checkout still get their answers", stopped)
	return nil
}

func (bs *Buyers) start(r family.Run, c command.Buyers) error {
	if _, err := bs.running(); err != nil {
		return fmt.Errorf("buyers: %w", err)
	}
	total := int(math.Round(c.Rate * c.For.Seconds()))
	if total < 1 {
		return fmt.Errorf("buyers: rate=%s/s for=%v makes no buyer; raise the rate or the time", timeline.Number(c.Rate), c.For)
	}
	bs.mu.Lock()
	br := &buyersRun{cmd: c, total: total, first: bs.next}
	br.arrivals, br.halt = context.WithCancel(bs.w.Context())
	bs.next += int64(total)
	bs.runs = append(bs.runs, br)
	bs.active++
	bs.wg.Add(1)
	bs.mu.Unlock()
	r.Begin(c.String())
	go bs.run(br)
	r.Say(timeline.Load, "buyers: %d buyers, orders %d–%d, arrive at the checkout at %s/s of lab time for %v",
		total, br.first, br.first+int64(total)-1, timeline.Number(c.Rate), c.For)
	return nil
}

// run lets the buyers arrive on the lab clock, each on its own goroutine,
// reports progress every second of lab time, and sums up once every buyer
// has an answer.
func (bs *Buyers) run(br *buyersRun) {
	defer bs.wg.Done()
	defer br.halt()
	ctx := bs.w.Context()
	done := make(chan struct{})
	progress := make(chan struct{})
	start := bs.w.Clock().Now()
	go func() {
		defer close(progress)
		bs.report(ctx, start, done)
	}()
	var inflight sync.WaitGroup
	for i := 0; i < br.total; i++ {
		at := start.Add(time.Duration(float64(i) / br.cmd.Rate * float64(time.Second)))
		// A buyer already due when the stop came does not arrive either:
		// a sleep for a time that has passed does not look at the stop.
		if bs.w.Clock().SleepUntil(br.arrivals, at) != nil || br.arrivals.Err() != nil {
			break
		}
		bs.arrive(ctx, br, br.first+int64(i), &inflight)
	}
	inflight.Wait()
	close(done)
	<-progress
	bs.mu.Lock()
	bs.active--
	bs.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	bs.w.AddAlways(timeline.Event{Time: bs.w.Clock().Now(), Kind: timeline.Load, Text: bs.summary(br)})
}

// report puts where the checkout stands in the timeline every second of
// lab time from start, until done.
func (bs *Buyers) report(ctx context.Context, start time.Time, done <-chan struct{}) {
	clock := bs.w.Clock()
	for next := start.Add(progressEvery); ; next = next.Add(progressEvery) {
		select {
		case <-done:
			return
		default:
		}
		if clock.SleepUntilOrWake(ctx, next, done) != nil {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		if co, err := bs.running(); err == nil && co != nil {
			bs.w.AddAlways(timeline.Event{Time: clock.Now(), Kind: timeline.Load, Text: progressText(next.Sub(start), co.Stats())})
		}
	}
}

// arrive sends buyer id to the checkout running now, on its own
// goroutine, or turns it away when none runs.
func (bs *Buyers) arrive(ctx context.Context, br *buyersRun, id int64, inflight *sync.WaitGroup) {
	co, err := bs.running()
	br.mu.Lock()
	br.arrived++
	if err != nil || co == nil {
		br.turned++
		if br.firstTurnedAway == "" {
			br.firstTurnedAway = err.Error()
		}
		br.mu.Unlock()
		return
	}
	br.mu.Unlock()
	// The buyer arrives here, on the lab clock's time; only the wait for
	// an answer is on its own goroutine.
	buy := co.Arrive(ctx, services.Purchase{OrderID: id, Amount: br.cmd.Amount})
	inflight.Add(1)
	go func() {
		defer inflight.Done()
		res, err := buy()
		br.mu.Lock()
		defer br.mu.Unlock()
		switch {
		case err == nil:
			br.served++
		case res.Charged:
			br.errorPages++
			br.charged++
		default:
			br.errorPages++
		}
	}()
}

// summary is a finished run's last line.
func (bs *Buyers) summary(br *buyersRun) string {
	br.mu.Lock()
	text := fmt.Sprintf("buyers done: %d arrived, %d served, %d shown an error page (%d of them after paying)",
		br.arrived, br.served, br.errorPages, br.charged)
	if br.arrived < br.total {
		text += fmt.Sprintf("; %d never came (buyers stop)", br.total-br.arrived)
	}
	if br.turned > 0 {
		text += fmt.Sprintf(", %d turned away (%s)", br.turned, br.firstTurnedAway)
	}
	br.mu.Unlock()
	if co, err := bs.running(); err == nil && co != nil {
		st := co.Stats()
		text += fmt.Sprintf("; checkout p50 %s, p99 %s", roundMS(st.Latency.P50), roundMS(st.Latency.P99))
	}
	return text
}

// progressText is one line of a buyers run: where the checkout stands.
func progressText(at time.Duration, st services.CheckoutStats) string {
	text := fmt.Sprintf("checkout at %v: %d arrived, %d of %d threads busy", at.Round(time.Second), st.Requests, st.Busy, st.Threads)
	if st.Waiting > 0 {
		text += fmt.Sprintf(", %d waiting for one", st.Waiting)
	}
	text += fmt.Sprintf("; %d served, %d error pages", st.OK, st.Errors)
	if st.ChargedButFailed > 0 {
		text += fmt.Sprintf(" (%d after paying)", st.ChargedButFailed)
	}
	return text
}

func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// --- values

// Value reads the checkout's measurements.
func (bs *Buyers) Value(_ context.Context, v command.Value) (any, bool, error) {
	if command.ServiceOf(v.Func) == "" {
		return nil, false, nil
	}
	co, err := bs.running()
	if err != nil {
		// Not yet: a learner or a lesson may be about to start it.
		return nil, true, family.NotNow(fmt.Errorf("%s: %w", v, err))
	}
	if co == nil {
		return nil, true, fmt.Errorf("%s: the checkout service is not a checkout", v)
	}
	st := co.Stats()
	seconds := func(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
	switch v.Func {
	case "p50":
		return seconds(st.Latency.P50), true, nil
	case "p99":
		return seconds(st.Latency.P99), true, nil
	case "arrived":
		return float64(st.Requests), true, nil
	case "answered":
		return float64(st.OK + st.Errors), true, nil
	case "served":
		return float64(st.OK), true, nil
	case "errors":
		return float64(st.Errors), true, nil
	case "no_thread":
		return float64(st.NoThread), true, nil
	case "charged_but_failed":
		return float64(st.ChargedButFailed), true, nil
	case "busy":
		return float64(st.Busy), true, nil
	case "waiting":
		return float64(st.Waiting), true, nil
	case "threads":
		return float64(st.Threads), true, nil
	}
	return nil, true, fmt.Errorf("%s: the lab cannot read this value", v)
}

// Observe adds nothing: the checkout's charges and sends are the
// services' and the queues' to report.
func (bs *Buyers) Observe(context.Context, *checker.History, *checker.Observed) error {
	return nil
}
