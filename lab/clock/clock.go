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
type Clock struct {
	mu      sync.Mutex
	wall0   time.Time // wall time of the last change (with its monotonic reading)
	lab0    time.Time // lab time at wall0
	speed   float64
	paused  bool
	stopAt  time.Time     // lab time at which the clock stops by itself; zero: none
	changed chan struct{} // closed and replaced on every change
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
	if c.paused {
		return c.lab0
	}
	t := c.lab0.Add(time.Duration(float64(time.Since(c.wall0)) * c.speed))
	if !c.stopAt.IsZero() && !t.Before(c.stopAt) {
		return c.stopAt
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
