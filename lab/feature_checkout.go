package lab

// The checkout feature: `buyers` sends buyers through the checkout
// service (lab/services.Checkout) in the background, and the checkout's
// measurements are lab values: p50(checkout), p99(checkout),
// arrived(checkout), answered(checkout), served(checkout),
// errors(checkout), no_thread(checkout), charged_but_failed(checkout),
// busy(checkout) and waiting(checkout).
//
// Each buyer is its own request on its own goroutine, arriving on the lab
// clock, so speed and pause apply. A buyer goes to whichever checkout runs
// when it arrives; with none running it is turned away. While buyers are
// in flight, the checkout's and the payments' per-buyer events (their SQL,
// each answer, each charge) are detail, and so are the routine queue events
// of the messages the checkout sent for buyers, so that the timeline keeps
// one progress line per second of lab time instead of hundreds.

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
	"github.com/mqlab/mqlab/lab/services"
)

// buyersProgressEvery is how often, in lab time, a buyers run reports.
const buyersProgressEvery = time.Second

// checkoutFeature is the buyers command and the checkout's lab values.
type checkoutFeature struct{}

// buyerSet is one world's buyers runs.
type buyerSet struct {
	wg sync.WaitGroup

	mu     sync.Mutex
	runs   []*buyerRun
	next   int64 // the next buyer's order id
	active int   // runs with buyers still in flight
}

func newBuyerSet() *buyerSet { return &buyerSet{next: 1} }

// quiet reports whether a service's per-buyer events are detail now.
func (bs *buyerSet) quiet(service string, kind services.EventKind) bool {
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

// routine reports whether a broker event is the routine handling of a
// buyer's message (sent, delivered, acked): detail, like the buyers' own
// events. Redeliveries, timeouts and dead letters stay in the timeline.
func (bs *buyerSet) routine(e broker.Event) bool {
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

// wait waits for every run's buyers; the world's context must have ended.
func (bs *buyerSet) wait() { bs.wg.Wait() }

// buyerRun is one buyers command.
type buyerRun struct {
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

func (checkoutFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.Buyers:
		return r.buyers(c)
	case command.BuyersStop:
		return r.buyersStop()
	}
	return fmt.Errorf("%s: the checkout has no handler for this command", cmd.Name())
}

// buyersStop stops the arrivals of every buyers run; the buyers already at
// the checkout get their answers.
func (r *run) buyersStop() error {
	bs := r.w.buyers
	bs.mu.Lock()
	runs := slices.Clone(bs.runs)
	bs.mu.Unlock()
	if len(runs) == 0 {
		return fmt.Errorf("buyers stop: no buyers have been sent; buyers rate=10/s for=5s sends some")
	}
	r.begin("buyers stop")
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
	r.say(EventLoad, "buyers stop: %d buyers will not arrive; those at the checkout still get their answers", stopped)
	return nil
}

func (r *run) buyers(c command.Buyers) error {
	w := r.w
	if _, err := w.checkout(); err != nil {
		return fmt.Errorf("buyers: %w", err)
	}
	total := int(math.Round(c.Rate * c.For.Seconds()))
	if total < 1 {
		return fmt.Errorf("buyers: rate=%s/s for=%v makes no buyer; raise the rate or the time", trimFloat(c.Rate), c.For)
	}
	bs := w.buyers
	bs.mu.Lock()
	br := &buyerRun{cmd: c, total: total, first: bs.next}
	br.arrivals, br.halt = context.WithCancel(w.ctx)
	bs.next += int64(total)
	bs.runs = append(bs.runs, br)
	bs.active++
	bs.wg.Add(1)
	bs.mu.Unlock()
	r.begin(c.String())
	go r.l.runBuyers(w, br)
	r.say(EventLoad, "buyers: %d buyers, orders %d–%d, arrive at the checkout at %s/s of lab time for %v",
		total, br.first, br.first+int64(total)-1, trimFloat(c.Rate), c.For)
	return nil
}

// checkout returns the running checkout service.
func (w *world) checkout() (*services.Checkout, error) {
	rs := w.svc.get("checkout")
	if rs == nil {
		return nil, fmt.Errorf("%s", w.svc.notRunning("checkout"))
	}
	co, _ := rs.svc.(*services.Checkout)
	return co, nil
}

// runBuyers lets the buyers arrive on the lab clock, each on its own
// goroutine, reports progress every second of lab time, and sums up once
// every buyer has an answer.
func (l *Lab) runBuyers(w *world, br *buyerRun) {
	bs := w.buyers
	defer bs.wg.Done()
	defer br.halt()
	ctx := w.ctx
	var inflight sync.WaitGroup
	start := l.clock.Now()
	done := make(chan struct{})
	progress := make(chan struct{})
	go func() {
		defer close(progress)
		for next := start.Add(buyersProgressEvery); ; next = next.Add(buyersProgressEvery) {
			select {
			case <-done:
				return
			default:
			}
			if l.clock.SleepUntilOrWake(ctx, next, done) != nil {
				return
			}
			select {
			case <-done:
				return
			default:
			}
			if co, err := w.checkout(); err == nil && co != nil {
				l.tl.Add(Event{Time: l.clock.Now(), Kind: EventLoad, Text: progressText(next.Sub(start), co.Stats())})
			}
		}
	}()
	for i := 0; i < br.total; i++ {
		at := start.Add(time.Duration(float64(i) / br.cmd.Rate * float64(time.Second)))
		if l.clock.SleepUntil(br.arrivals, at) != nil {
			break
		}
		id := br.first + int64(i)
		co, err := w.checkout()
		br.mu.Lock()
		br.arrived++
		if err != nil || co == nil {
			br.turned++
			if br.firstTurnedAway == "" {
				br.firstTurnedAway = err.Error()
			}
			br.mu.Unlock()
			continue
		}
		br.mu.Unlock()
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			res, err := co.Buy(ctx, services.Purchase{OrderID: id, Amount: br.cmd.Amount})
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
	inflight.Wait()
	close(done)
	<-progress
	bs.mu.Lock()
	bs.active--
	bs.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
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
	if co, err := w.checkout(); err == nil && co != nil {
		st := co.Stats()
		text += fmt.Sprintf("; checkout p50 %s, p99 %s", roundMS(st.Latency.P50), roundMS(st.Latency.P99))
	}
	l.tl.Add(Event{Time: l.clock.Now(), Kind: EventLoad, Text: text})
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

func (checkoutFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	if command.ServiceOf(v.Func) == "" {
		return nil, false, nil
	}
	co, err := w.checkout()
	if err != nil {
		// Not yet: a learner or a lesson may be about to start it.
		return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
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
	}
	return nil, true, fmt.Errorf("%s: the lab cannot read this value", v)
}

func (checkoutFeature) observe(context.Context, *world, *checker.History, *checker.Observed) error {
	return nil
}

// --- the checkout as a service

// checkoutText says, for service start, how the checkout works and where
// queued mode sends the rest of the work.
func checkoutText(w *world, rs *runningService) string {
	co, _ := rs.svc.(*services.Checkout)
	text := "; it charges through payments"
	if co != nil {
		cfg := co.Config()
		text = fmt.Sprintf("; %d request threads, buyers give up after %v; it charges through payments", cfg.Threads, cfg.Timeout)
		if rs.mode == string(services.Sync) {
			return text + fmt.Sprintf(", then calls receipt (%v a call) and warehouse while the buyer waits", cfg.Receipt)
		}
	}
	const dest = "receipts"
	switch {
	case w.isQueue(dest):
		return text + fmt.Sprintf(" and sends the rest of the work (receipt, warehouse) to queue %s as client checkout", dest)
	case topicExists(w, dest):
		return text + fmt.Sprintf(" and publishes the rest of the work (receipt, warehouse) to topic %s as client checkout", dest)
	}
	return text + fmt.Sprintf(" and sends the rest of the work to queue %s, which does not exist yet: its sends fail until queue create %s", dest, dest)
}

func topicExists(w *world, name string) bool {
	_, err := w.topic(name)
	return err == nil
}

// publish sends one message of a service to a queue as a client named
// after the service, keeping the service's message id. The send goes into
// the history like any other, so the checker counts it.
func (qs *queueSet) publish(ctx context.Context, client, queue string, m services.Message) (services.Outcome, error) {
	w := qs.w
	_, qc, err := qs.sender(client)
	if err != nil {
		return services.Failed, err
	}
	rec := &QueueSend{MsgID: m.ID, Client: client, Queue: queue, Value: m.Value, Outcome: checker.Pending, Sent: qs.l.clock.Now()}
	qs.mu.Lock()
	qs.sends = append(qs.sends, rec)
	qs.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	res := qc.Send(ctx, queue, broker.QueueMessage{Body: []byte(m.Value), MsgID: m.ID})
	now := qs.l.clock.Now()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if len(res) == 0 {
		rec.Outcome = checker.Unknown
		return services.Unknown, fmt.Errorf("send %s to %s: no answer", m.ID, queue)
	}
	rs := res[0]
	rec.Seq, rec.Attempts, rec.Answered = rs.Seq, rs.Attempts, now
	rec.Outcome = outcomeOf(rs.Outcome)
	if rs.Err != nil {
		rec.Err = rs.Err.Error()
	}
	switch {
	case rs.Rejected:
		rec.Outcome = checker.Rejected
		return services.Rejected, fmt.Errorf("%s is full: %w", queue, rs.Err)
	case rs.Outcome == broker.OutcomeAcked:
		return services.Acknowledged, nil
	case rs.Outcome == broker.OutcomeUnknown:
		return services.Unknown, rs.Err
	}
	return services.Failed, rs.Err
}
