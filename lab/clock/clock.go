// Package clock is the lab's time: wall time at a speed the learner sets,
// which can pause. Everything that waits in lab time — generators,
// clients' rates and backoffs, the services' relays — waits on one Clock.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is the lab's time: wall time scaled by a speed factor, which can be
// paused. The broker stamps records and events with it, and generators (and
// later visibility timeouts, TTLs and session timeouts) wait on it; raft's own
// timeouts stay on the wall clock and follow the timing preset.
//
// Lab time also waits for the lab's own work (see Claim): when a generator
// or a paced client is behind the messages that fell due for it, because
// the machine is busy, the clock holds until it catches up, so a rate the
// lab imposes is the rate lab time shows, however slow the machine. Work
// the lab does at once in lab time (a client handling the message it
// took, a service's publish) holds the clock the same way (see Hold), so
// what takes no lab time in the model takes none on a busy machine.
type Clock struct {
	mu      sync.Mutex
	wall0   time.Time // wall time of the last change (with its monotonic reading)
	lab0    time.Time // lab time at wall0
	speed   float64
	paused  bool
	stopAt  time.Time     // lab time at which the clock stops by itself; zero: none
	changed chan struct{} // closed and replaced on every change

	claims   map[*Claim]struct{}
	sleepers map[time.Time]int // the lab times sleepers wait for, and how many wait for each
	first    time.Time         // the earliest of sleepers; zero: none or not known
	held     bool              // the last reading was held back for the lab's work
	given    time.Duration     // lab time the clock gave up waiting for the lab's work
	recent   [10]heldBucket    // given up, by tenth of a wall second, the last second's
}

// heldBucket is the lab time given up in one tenth of a wall second.
type heldBucket struct {
	tenth int64 // wall time in tenths of a second since the Unix epoch
	given time.Duration
}

// New starts a clock at the current wall time, running at 1x.
func New() *Clock {
	now := time.Now()
	return &Clock{wall0: now, lab0: now.Round(0), speed: 1, changed: make(chan struct{})}
}

// Now returns the lab time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	c.held = false
	if c.paused {
		return c.lab0
	}
	wall := time.Now()
	t := c.lab0.Add(time.Duration(float64(wall.Sub(c.wall0)) * c.speed))
	if !c.stopAt.IsZero() && !t.Before(c.stopAt) {
		t = c.stopAt
	}
	if limit, ok := c.limitLocked(wall, t); ok && t.After(limit) {
		// The lab's work is behind: time waits here for it, and what the
		// wall clock ran on meanwhile is given up, not made up later.
		limit = later(limit, c.lab0)
		c.given += t.Sub(limit)
		tenth := wall.UnixNano() / int64(time.Second/10)
		b := &c.recent[tenth%int64(len(c.recent))]
		if b.tenth != tenth {
			*b = heldBucket{tenth: tenth}
		}
		b.given += t.Sub(limit)
		c.lab0, c.wall0, c.held = limit, wall, true
		return limit
	}
	return t
}

// stoppedLocked reports whether lab time stands still: paused, or at the
// point PauseAt named.
func (c *Clock) stoppedLocked() bool {
	return c.paused || !c.stopAt.IsZero() && !c.nowLocked().Before(c.stopAt)
}

// Speed returns the factor and whether the clock is paused.
func (c *Clock) Speed() (factor float64, paused bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.speed, c.stoppedLocked()
}

// PauseAt makes lab time stop by itself when it reaches t, exactly there
// however late anyone looks; Resume starts it again.
func (c *Clock) PauseAt(t time.Time) { c.change(func() { c.stopAt = t }) }

// SetSpeed makes lab time run factor times as fast as the wall clock.
func (c *Clock) SetSpeed(factor float64) {
	c.change(func() { c.speed = factor })
}

// Pause stops lab time; Resume starts it again where it stopped.
func (c *Clock) Pause() { c.change(func() { c.paused = true }) }

// Resume starts lab time again after Pause.
func (c *Clock) Resume() { c.change(func() { c.paused = false }) }

func (c *Clock) change(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stopped := c.stoppedLocked()
	c.lab0 = c.nowLocked()
	c.wall0 = time.Now()
	if stopped && !c.paused {
		// The stop PauseAt named was reached: from here on an ordinary pause.
		c.paused, c.stopAt = true, time.Time{}
	}
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// Sleep waits until d of lab time has passed, following speed changes and
// pauses as they happen, or until ctx ends.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	return c.SleepUntil(ctx, c.Now().Add(d))
}

// SleepUntil waits until lab time reaches t, or until ctx ends.
func (c *Clock) SleepUntil(ctx context.Context, t time.Time) error {
	return c.SleepUntilOrWake(ctx, t, nil)
}

// SleepOrWake waits d of lab time like Sleep, but returns early (nil) when
// wake delivers; d <= 0 waits for wake or ctx alone.
func (c *Clock) SleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if d <= 0 {
		if h := c.holdIn(ctx); h != nil {
			c.mu.Lock()
			on := h.setAsideLocked()
			c.mu.Unlock()
			if on {
				defer func() { h.On(c.Now()) }()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			return nil
		}
	}
	return c.SleepUntilOrWake(ctx, c.Now().Add(d), wake)
}

// SleepUntilOrWake is SleepUntil that also returns when wake delivers (a nil
// wake never does).
func (c *Clock) SleepUntilOrWake(ctx context.Context, t time.Time, wake <-chan struct{}) error {
	c.mu.Lock()
	if !t.After(c.nowLocked()) {
		c.mu.Unlock()
		return nil
	}
	c.addSleeperLocked(t)
	if h := c.holdIn(ctx); h != nil && h.setAsideLocked() {
		// The work waits on lab time now: on again from the time it
		// slept to, or from when it was woken.
		at := t
		defer func() { h.On(at) }()
		defer func() {
			if now := c.Now(); now.Before(at) {
				at = now
			}
		}()
	}
	c.mu.Unlock()
	defer c.removeSleeper(t)
	for {
		c.mu.Lock()
		changed := c.changed
		var wait time.Duration
		rem := t.Sub(c.nowLocked())
		if rem <= 0 {
			c.mu.Unlock()
			return nil
		}
		if !c.stoppedLocked() {
			wait = time.Duration(float64(rem)/c.speed) + time.Microsecond
			if c.held {
				// Held for a claim, which moves without a change: look again soon.
				wait = min(wait, heldPoll)
			}
		}
		c.mu.Unlock()
		var timer <-chan time.Time
		var tm *time.Timer
		if wait > 0 {
			tm = time.NewTimer(wait)
			timer = tm.C
		}
		woken := false
		select {
		case <-ctx.Done():
		case <-changed:
		case <-timer:
		case <-wake:
			woken = true
		}
		if tm != nil {
			tm.Stop()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if woken {
			return nil
		}
	}
}

// SleepWall waits d of wall time, not lab time, or until ctx ends: for
// what paces itself by the machine, such as how often to read the
// cluster.
func SleepWall(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Slack is how far lab time may run past the oldest work that fell due and
// is not done: a generator's batches in flight and a paced client's wake-up
// take a moment on any machine, and lab time should not stutter for them.
const Slack = 250 * time.Millisecond

// Grip is how long, in wall time, a claim holds the clock without moving:
// work that waits (on a leader election, on lab time itself) lets the clock
// go on rather than stopping it.
const Grip = 250 * time.Millisecond

// heldPoll is how often a sleeper looks at a clock held for a claim.
const heldPoll = 2 * time.Millisecond

// A Claim is one part of the lab's own work paced by lab time — a load's
// generator, a client's rate= — that tells the clock when it falls behind
// what came due for it. While a claim is behind, lab time runs no further
// than Slack past the work it names; a claim that has held lab time for
// Grip of wall time without moving stops holding (work due ahead holds
// nothing, so its grip starts when lab time reaches it). Its zero value is not usable: take one with
// Clock.Claim.
type Claim struct {
	c     *Clock
	slack time.Duration // how far past due lab time may run
	// wall, when set, gives the slack in wall time instead: lab time may
	// run as far past due as the wall clock takes wall, at the speed of
	// the moment (see Hold).
	wall  time.Duration
	due   time.Time     // the oldest work due and not done; zero: none
	moved time.Time     // wall time of the last Behind
	grip  time.Duration // how long it holds without moving; zero: Grip
	// reached is the wall time lab time reached due plus slack; zero:
	// not yet, or not looked at since due last changed.
	reached time.Time
	// brief says Briefly renewed the grip since the last move: asking
	// again without moving renews nothing.
	brief  bool
	closed bool
}

// Claim registers a new claim, behind nothing, that lets lab time run
// Slack past its work.
func (c *Clock) Claim() *Claim { return c.ClaimWithin(Slack) }

// ClaimWithin is Claim with a slack of its own, for work whose lateness
// shows sooner (a client that takes one message at a time), at most Slack.
func (c *Clock) ClaimWithin(slack time.Duration) *Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := &Claim{c: c, slack: min(max(slack, 0), Slack)}
	if c.claims == nil {
		c.claims = map[*Claim]struct{}{}
	}
	c.claims[cl] = struct{}{}
	return cl
}

// Behind says the oldest work due and not done fell due at due.
func (cl *Claim) Behind(due time.Time) {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !cl.closed && !due.Equal(cl.due) {
		// Only a move renews the grip: work stuck on one message lets go.
		cl.due, cl.moved, cl.grip, cl.reached, cl.brief = due, time.Now(), 0, time.Time{}, false
	}
}

// Briefly says the work behind now asks something that may wait on more
// than the machine (a fetch that can meet a rebalance): the claim holds
// for at most d of wall time from now unless it moves again. Only the
// first ask after a move renews the grip: a client that asks again and
// again and finds nothing (what it waits for comes only as lab time
// passes) lets the clock go on.
func (cl *Claim) Briefly(d time.Duration) {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !cl.due.IsZero() && !cl.brief {
		cl.moved, cl.grip, cl.brief = time.Now(), min(d, Grip), true
	}
}

// Idle says nothing is due: the claim holds nothing until Behind again.
func (cl *Claim) Idle() {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cl.due, cl.reached = time.Time{}, time.Time{}
}

// Close ends the claim for good.
func (cl *Claim) Close() {
	c := cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	cl.closed, cl.due = true, time.Time{}
	delete(c.claims, cl)
}

// A sleeper is lab work too: lab time runs no further than Slack past the
// time a sleeper waits for until it has woken, so a sleeper the machine is
// slow to run keeps its place in lab time.
func (c *Clock) addSleeperLocked(t time.Time) {
	if c.sleepers == nil {
		c.sleepers = map[time.Time]int{}
	}
	c.sleepers[t]++
	if len(c.sleepers) == 1 || !c.first.IsZero() && t.Before(c.first) {
		c.first = t
	}
}

func (c *Clock) removeSleeper(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sleepers[t]--; c.sleepers[t] <= 0 {
		delete(c.sleepers, t)
		if t.Equal(c.first) {
			c.first = time.Time{} // found again when next needed
		}
	}
}

// firstSleeperLocked is the earliest time a sleeper waits for.
func (c *Clock) firstSleeperLocked() (time.Time, bool) {
	if c.first.IsZero() {
		for t := range c.sleepers {
			if c.first.IsZero() || t.Before(c.first) {
				c.first = t
			}
		}
	}
	return c.first, !c.first.IsZero()
}

// limitLocked is the furthest lab time the lab's work lets the clock
// reach: Slack past the earliest sleeper and the oldest claim behind.
// now is the lab time the wall clock alone would give.
func (c *Clock) limitLocked(wall, now time.Time) (time.Time, bool) {
	var limit time.Time
	if t, ok := c.firstSleeperLocked(); ok {
		limit = t.Add(Slack)
	}
	for cl := range c.claims {
		if cl.due.IsZero() {
			continue
		}
		slack := cl.slack
		if cl.wall > 0 {
			slack = time.Duration(float64(cl.wall) * c.speed)
		}
		l := cl.due.Add(slack)
		if now.Before(l) {
			continue // work due ahead holds nothing yet
		}
		grip := cl.grip
		if grip == 0 {
			grip = Grip
			if cl.wall > 0 {
				grip = HoldGrip // a hold on work the machine runs
			}
		}
		// The grip runs from the last move, or from when lab time
		// reached the limit if that was later: a client that sleeps
		// until its next message is held to it however long it slept.
		if cl.reached.IsZero() {
			cl.reached = c.wall0.Add(time.Duration(float64(l.Sub(c.lab0)) / c.speed))
		}
		start := cl.moved
		if cl.reached.After(start) {
			start = cl.reached
		}
		if wall.Sub(start) > grip {
			continue
		}
		if limit.IsZero() || l.Before(limit) {
			limit = l
		}
	}
	return limit, !limit.IsZero()
}

// Given is the lab time the clock has given up waiting for the lab's work
// since it started: zero on a machine that keeps up.
func (c *Clock) Given() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nowLocked()
	return c.given
}

// Behind is the share of the last second's lab time, from 0 to 1, that
// the clock gave up waiting for the lab's work: 0 while the machine keeps
// up; 0.4 at 10x means lab time ran at about 6x.
func (c *Clock) Behind() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nowLocked()
	if c.paused {
		return 0
	}
	now := time.Now().UnixNano() / int64(time.Second/10)
	var given time.Duration
	for _, b := range c.recent {
		if now-b.tenth < int64(len(c.recent)) {
			given += b.given
		}
	}
	nominal := time.Duration(float64(time.Second) * c.speed)
	return min(1, float64(given)/float64(nominal))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Brisk is how long, in wall time, a step of the lab's work that takes no
// lab time may take before the clock waits for it: a client handling the
// message it took, a service's publish. Such a step takes a few
// milliseconds on an idle machine, which lab time there lets pass as the
// wall clock does; a busy machine that stops running it for longer holds
// lab time instead of taking the stall from the step's lab time.
const Brisk = 20 * time.Millisecond

// HoldGrip is how long, in wall time, a hold keeps lab time for work the
// machine has not got round to: longer than a busy machine leaves a
// runnable goroutine waiting, short enough that work held up by anything
// else (a hold left on by mistake) stops the lab only for a moment.
const HoldGrip = time.Second

// A Hold is the lab's work that happens at once in lab time — a client's
// receive, work and ack around its modelled work=, a service's publish or
// relay pass — and is not paced by a rate. While it is on, lab time runs
// no further than Brisk of wall time, at the clock's speed, past the
// moment it came on, and holds there while the machine runs the work, up
// to HoldGrip. While the work waits on the broker (Asking) it holds for
// at most Grip, as a claim does: a broker that keeps it waiting longer (an
// election, a rebalance) lets the clock go on. A sleep on the clock under
// a context that carries the hold (Hold.Context) turns it off while it
// sleeps, since work that waits on lab time must not have lab time wait
// for it, and on again from the time it slept to. A hold that is off
// holds nothing.
type Hold struct{ cl *Claim }

// Hold registers a hold, off.
func (c *Clock) Hold() *Hold {
	cl := c.ClaimWithin(0)
	c.mu.Lock()
	cl.wall = Brisk
	c.mu.Unlock()
	return &Hold{cl: cl}
}

// On says the work is at hand from lab time at: the message taken, the
// sleep over. Turning it on again at a later time renews its grip.
func (h *Hold) On(at time.Time) { h.cl.Behind(at) }

// Off says the work is done, or waits on something other than the
// machine: lab time, or other work.
func (h *Hold) Off() { h.cl.Idle() }

// Close ends the hold for good.
func (h *Hold) Close() { h.cl.Close() }

// Asking says the work now waits on the broker's answer: until answered is
// called the hold keeps lab time for at most Grip from now, and from then
// on for HoldGrip again.
func (h *Hold) Asking() (answered func()) {
	h.grip(Grip)
	return func() { h.grip(0) }
}

// grip renews the hold's grip from now for d (zero: HoldGrip), if it is on.
func (h *Hold) grip(d time.Duration) {
	c := h.cl.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !h.cl.due.IsZero() {
		h.cl.moved, h.cl.grip = time.Now(), d
	}
}

// Asking is Hold.Asking for the hold ctx carries on c; with none it does
// nothing.
func (c *Clock) Asking(ctx context.Context) (answered func()) {
	if h := c.holdIn(ctx); h != nil {
		return h.Asking()
	}
	return func() {}
}

// holdKey is the context key of the hold a context carries.
type holdKey struct{}

// Context returns ctx carrying h, so that the clock's sleeps under it
// (a service's modelled calls, its write ceiling) set the hold aside.
func (h *Hold) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

// holdIn is the hold ctx carries on clock c and whether it is on; nil when
// there is none.
func (c *Clock) holdIn(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	if h == nil || h.cl.c != c {
		return nil
	}
	return h
}

// setAsideLocked turns h off for a sleep and says whether it was on.
func (h *Hold) setAsideLocked() bool {
	on := !h.cl.due.IsZero()
	h.cl.due, h.cl.reached = time.Time{}, time.Time{}
	return on
}
