package lab

// What consumers (feature_groups.go) and workers (feature_queues.go) share
// as background clients: a client's state across its runs, how a run
// starts and ends, and a run's life — its loop, the lab's order of work
// for one message in hand, the attempts at the work and crash points. The
// set that names them is in client_set.go. Each kind brings only what is
// its own: how it receives, what ack means (a commit for a log, an ack for
// a queue), what it does with a failure, and the words it says.

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/services"
)

// clientCore is what a consumer and a worker keep across their runs.
type clientCore struct {
	name string

	mu         sync.Mutex
	state      string // up, crashed or stopped
	runs       int
	crash      string // the armed crash point, "" once it fired
	waiting    string // the service it waits for
	lastErr    string
	failures   int // failed attempts
	processedN int // work done
	clock      *Clock
	since      time.Time // lab time of the last start, restart, crash or stop
}

func (c *clientCore) stateNow() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *clientCore) setWaiting(service string) {
	c.mu.Lock()
	c.waiting = service
	c.mu.Unlock()
}

func (c *clientCore) failed(err error) {
	c.mu.Lock()
	c.failures++
	c.lastErr = err.Error()
	c.mu.Unlock()
}

// fire says whether the armed crash point is at, disarming it: a crash
// fires once.
func (c *clientCore) fire(at string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	armed := c.crash == at
	if armed {
		c.crash = ""
	}
	return armed
}

// crashed marks the client crashed.
func (c *clientCore) crashed() {
	c.mu.Lock()
	c.state = ClientCrashed
	c.waiting = ""
	c.changedLocked()
	c.mu.Unlock()
}

// halted marks the client stopped once its run has ended: always with
// stop, else only if it was up (a crashed client stays crashed).
func (c *clientCore) halted(stop bool) {
	c.mu.Lock()
	if stop || c.state == ClientUp {
		c.state = ClientStopped
	}
	c.waiting = ""
	c.changedLocked()
	c.mu.Unlock()
}

// clientRuns is a consumer or a worker: its state across runs, the
// command that (re)started it (Cmd, options merged) and its current run
// (R). Each kind embeds it and adds its own counts.
type clientRuns[Cmd any, R backgroundRun] struct {
	clientCore

	// Guarded by mu.
	cmd Cmd
	run R // the current or last run; nil before the first
}

// backgroundRun is one run of a consumer or a worker, as its client
// starts and ends it.
type backgroundRun interface {
	comparable
	life() *clientRun
	loop() // receives and works until the run is over
	// leave tells the broker the client is going, once a run that was up
	// has ended.
	leave() error
	// vanish drops the run's broker client without a goodbye, as a process
	// that died does.
	vanish()
}

// newClientRuns is a client before its first run: named, stopped.
func newClientRuns[Cmd any, R backgroundRun](name string) clientRuns[Cmd, R] {
	return clientRuns[Cmd, R]{clientCore: clientCore{name: name, state: ClientStopped}}
}

func (c *clientRuns[Cmd, R]) command() Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd
}

// current is the current or last run, or nil.
func (c *clientRuns[Cmd, R]) current() R {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.run
}

// launchRun makes ru the current run of c, started by cmd with crash=
// armed, and sets its loop going; set, called with c.mu held, clears what
// else the kind keeps of the last run. False when s has closed: ru is
// dropped.
func launchRun[C backgroundClient, Cmd any, R backgroundRun](s *clientSet[C], c *clientRuns[Cmd, R], cmd Cmd, crash string, ru R, set func()) bool {
	if !s.begin(&c.clientCore, crash, func() {
		c.cmd, c.run = cmd, ru
		if set != nil {
			set()
		}
	}) {
		ru.life().stopHard()
		ru.life().held.Close()
		ru.life().pacer.Close()
		ru.vanish()
		return false
	}
	go ru.loop()
	return true
}

// halt ends the current run: it asks the loop to finish the message in
// hand, waits (cutting the work short after a request timeout) and, if
// the run was up, has it leave. A crashed run only has its state changed;
// with stop the client is stopped even then.
func (c *clientRuns[Cmd, R]) halt(stop bool) error {
	c.mu.Lock()
	ru, st := c.run, c.state
	c.mu.Unlock()
	var none R
	if ru == none {
		return nil
	}
	ru.life().end(ru.life().w.timing.RequestTimeout)
	var err error
	if st == ClientUp {
		err = ru.leave()
	}
	c.halted(stop)
	return err
}

// haltUp ends the run of a client that is up, before a restart launches
// the next; was is the state it was in.
func (c *clientRuns[Cmd, R]) haltUp() (was string) {
	was = c.stateNow()
	if was == ClientUp {
		c.halt(false)
	}
	return was
}

// kill ends the current run at once and without a word: the world is
// going away.
func (c *clientRuns[Cmd, R]) kill() {
	var none R
	if ru := c.current(); ru != none {
		ru.life().kill()
		ru.vanish()
	}
}

// clientRun is one life of a consumer or worker: its policy, its random
// numbers and the goroutine that receives and works.
type clientRun struct {
	w     *world
	clock *Clock
	opts  clients.Policy
	rng   *rand.Rand

	soft, hard         context.Context // soft: stop asks; hard: the work and the acks
	stopSoft, stopHard context.CancelFunc
	done               chan struct{}

	pacer clients.Pacer // rate=
	// held keeps lab time while the run handles the messages it took:
	// receive, ack and the service's handling take no lab time in the
	// model, so a machine slow to run them must not have lab time run on.
	held *clock.Hold
	// heldSoft and heldHard are soft and hard carrying held: the run's
	// sleeps on lab time under them (work=, a backoff, the wait for its
	// service or its rate, the service's own waits) set the hold aside
	// while they last.
	heldSoft, heldHard context.Context
}

// newClientRun starts the next life of c in world w; its random numbers
// are seeded by the client's name and the run's number.
func newClientRun(l *Lab, w *world, c *clientCore, opts clients.Policy) clientRun {
	c.mu.Lock()
	c.runs++
	seed := c.runs
	c.mu.Unlock()
	h := fnv.New64a()
	h.Write([]byte(c.name))
	ru := clientRun{w: w, clock: l.clock, opts: opts, rng: rand.New(rand.NewPCG(h.Sum64(), uint64(seed))), done: make(chan struct{}),
		held: l.clock.Hold()}
	ru.hard, ru.stopHard = context.WithCancel(w.ctx)
	ru.soft, ru.stopSoft = context.WithCancel(ru.hard)
	ru.heldSoft, ru.heldHard = ru.held.Context(ru.soft), ru.held.Context(ru.hard)
	if opts.Rate > 0 {
		// Late by more than a message's gap shows as a burst on the
		// throughput a learner reads: hold lab time sooner than that.
		ru.pacer.Claim = l.clock.ClaimWithin(max(time.Duration(float64(time.Second)/opts.Rate), 20*time.Millisecond))
		ru.pacer.Instant = opts.Work == 0 && opts.Service == ""
	}
	return ru
}

// taken says the run has a message in hand from lab time now: until
// putDown, what it does with it holds lab time (see clock.Hold).
func (ru *clientRun) taken(now time.Time) { ru.held.On(now) }

// putDown says the run has finished with the messages it took.
func (ru *clientRun) putDown() { ru.held.Off() }

// end asks the loop to finish the message in hand and waits, cutting the
// work short after timeout.
func (ru *clientRun) end(timeout time.Duration) {
	ru.stopSoft()
	t := time.NewTimer(timeout)
	select {
	case <-ru.done:
	case <-t.C:
		ru.stopHard()
		<-ru.done
	}
	t.Stop()
	ru.stopHard()
}

// kill ends the run at once.
func (ru *clientRun) kill() {
	ru.stopHard()
	<-ru.done
}

func (ru *clientRun) life() *clientRun { return ru }

// settle sends one commit or ack (req) under the request timeout and
// counts it in ok, or else in failed with the client's last error; both
// point into c, guarded by c.mu. gone means the run was stopped or its
// world retired meanwhile: what became of the request does not matter
// now, and it is not counted.
func (ru *clientRun) settle(c *clientCore, ok, failed *int, req func(context.Context) error) (err error, gone bool) {
	ctx, cancel := context.WithTimeout(ru.hard, ru.w.timing.RequestTimeout)
	defer cancel()
	answered := ru.held.Asking()
	err = req(ctx)
	answered()
	if ru.hard.Err() != nil {
		return err, true
	}
	c.mu.Lock()
	if err == nil {
		*ok++
	} else {
		*failed++
		c.lastErr = err.Error()
	}
	c.mu.Unlock()
	return err, false
}

// loop runs step until the run is stopped or crashes. step receives and
// handles what it got: over when the run is over, or the receive's error,
// after which the loop tries again unless gone says the client is gone.
func (ru *clientRun) loop(step func() (over bool, err error), gone func(error) bool) {
	defer close(ru.done)
	defer ru.pacer.Close()
	defer ru.held.Close()
	for ru.soft.Err() == nil {
		over, err := step()
		if over {
			return
		}
		if err != nil {
			if ru.soft.Err() != nil || gone(err) {
				return
			}
			if clock.SleepWall(ru.soft, 20*time.Millisecond) != nil {
				return
			}
		}
	}
}

// workResult is how the work for one message ended.
type workResult int

const (
	workDone    workResult = iota // processed (or "already done")
	workGivenUp                   // failed its last attempt, or permanently
	workCrashed                   // the service crashed, and the client with it
	workStopped                   // the client was stopped in the middle
)

// inHand is a message a client has received, as process takes it.
type inHand interface {
	ack()             // commit its offset (a log) or ack it (a queue)
	work() workResult // the work, with the kind's retries and settling of failures
	crash(at string)  // the armed crash point at fired: say so and crash
}

// process runs the lab's order of work for one message in hand: ack if
// ack=before → the before-work crash point → the work → the after-work
// crash point → ack if ack=after. A message given up is acked after the
// work only with ackGivenUp (a log skips it; a queue has settled it with
// a nack or the dead-letter queue). False means the run is over (crashed
// or stopped).
func (ru *clientRun) process(c *clientCore, m inHand, ackGivenUp bool) bool {
	if ru.opts.AckBefore {
		m.ack()
	}
	if c.fire("before-work") {
		m.crash("before-work")
		return false
	}
	res := m.work()
	if res == workCrashed || res == workStopped {
		return false
	}
	if c.fire("after-work") {
		m.crash("after-work")
		return false
	}
	if !ru.opts.AckBefore && (res == workDone || ackGivenUp) {
		m.ack()
	}
	return true
}

// try makes one attempt at the work for m, waiting in lab time while the
// client's service is not running; waiting tells the timeline once when
// the wait begins. wait is the last pause, kept across a message's
// attempts; stopped means the client was stopped while it waited. Any
// other error is the attempt's, for the caller's policy.
func (ru *clientRun) try(c *clientCore, m services.Message, wait *time.Duration, waiting func()) (err error, stopped bool) {
	// The message is taken: being late for it is over, and the work may
	// wait on lab time.
	ru.pacer.Working()
	// work= is the time the attempt takes before its outcome is known.
	if ru.opts.Work > 0 && ru.clock.Sleep(ru.heldSoft, ru.opts.Work) != nil {
		return nil, true
	}
	for {
		err := ru.opts.Attempt(ru.heldHard, ru.rng, m, ru.w.handler)
		if !errors.Is(err, services.ErrNotRunning) || errors.Is(err, services.ErrCrashed) {
			return err, false
		}
		// Not a failure of the message: the service is down.
		if *wait == 0 {
			c.setWaiting(ru.opts.Service)
			waiting()
		}
		*wait = min(max(2**wait, serviceWaitMin), serviceWaitMax)
		ru.pacer.Rest() // waiting for the service is not time to catch up on
		if ru.clock.Sleep(ru.heldSoft, *wait) != nil {
			return nil, true
		}
	}
}

// crashNotes is what a crash at each point means for a kind of client.
type crashNotes struct {
	beforeWork, beforeWorkAcked, afterWork, afterWorkAcked string
}

func (n crashNotes) at(at string, ackBefore bool) string {
	switch {
	case at == "before-work" && ackBefore:
		return n.beforeWorkAcked
	case at == "before-work":
		return n.beforeWork
	case ackBefore:
		return n.afterWorkAcked
	}
	return n.afterWork
}
