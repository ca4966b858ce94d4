package clock

import (
	"context"
	"testing"
	"time"
)

// At 20x, 400 ms of lab time passes in about 20 ms of wall time; a speed
// change during a sleep applies at once; a paused clock stands still
// until it resumes.
func TestClockSpeedAndPause(t *testing.T) {
	c := New()
	ctx := ctxFor(t, 10*time.Second)
	c.SetSpeed(20)
	start, wall := c.Now(), time.Now()
	if err := c.Sleep(ctx, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if lab, w := c.Now().Sub(start), time.Since(wall); lab < 400*time.Millisecond || w > 200*time.Millisecond {
		t.Errorf("at 20x: %v of lab time took %v of wall time", lab, w)
	}

	c.SetSpeed(1)
	done := make(chan error, 1)
	wall = time.Now()
	go func() { done <- c.Sleep(ctx, 2*time.Second) }()
	c.SetSpeed(1000) // the sleeper picks up the new speed
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if w := time.Since(wall); w > time.Second {
		t.Errorf("a 2 s sleep at 1x sped up to 1000x took %v", w)
	}

	c.Pause()
	frozen := c.Now()
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if err := c.Sleep(sctx, time.Nanosecond); err == nil {
		t.Error("a sleep on a paused clock ended before the clock resumed")
	}
	cancel()
	if !c.Now().Equal(frozen) {
		t.Error("a paused clock moved")
	}
	if f, paused := c.Speed(); f != 1000 || !paused {
		t.Errorf("speed %v paused %v", f, paused)
	}
	c.Resume()
	if err := c.Sleep(ctx, 10*time.Millisecond); err != nil || !c.Now().After(frozen) {
		t.Errorf("after resume: %v, %v → %v", err, frozen, c.Now())
	}
}

// SleepOrWake returns at a wake, at the end of its lab time, or with ctx;
// with no time it waits for the wake alone.
func TestClockSleepOrWake(t *testing.T) {
	c := New()
	ctx := ctxFor(t, 10*time.Second)
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	if err := c.SleepOrWake(ctx, time.Hour, wake); err != nil {
		t.Fatalf("woken: %v", err)
	}
	wake <- struct{}{}
	if err := c.SleepOrWake(ctx, 0, wake); err != nil {
		t.Fatalf("woken with no time: %v", err)
	}
	c.SetSpeed(100)
	start := c.Now()
	if err := c.SleepOrWake(ctx, 500*time.Millisecond, wake); err != nil || c.Now().Sub(start) < 500*time.Millisecond {
		t.Fatalf("slept %v of lab time: %v", c.Now().Sub(start), err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.SleepOrWake(short, 0, wake); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}

// PauseAt stops lab time exactly at the point it names, however late the
// clock is read, and Resume goes on from there.
func TestClockPauseAtStopsExactly(t *testing.T) {
	c := New()
	ctx := ctxFor(t, 10*time.Second)
	c.SetSpeed(100)
	at := c.Now().Add(2 * time.Second)
	c.PauseAt(at)
	if err := c.SleepUntil(ctx, at); err != nil {
		t.Fatal(err)
	}
	// 30 ms of wall time would be 3 s of lab time at 100x.
	deadline := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(deadline) {
		if now := c.Now(); !now.Equal(at) {
			t.Fatalf("the clock stopped at %v, want exactly %v", now, at)
		}
	}
	if _, paused := c.Speed(); !paused {
		t.Error("the clock does not say it is paused at its stop")
	}
	// A sleeper past the stop waits for the resume.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if err := c.Sleep(sctx, time.Millisecond); err == nil {
		t.Error("a sleep ended while the clock stood at its stop")
	}
	cancel()
	c.Resume()
	if err := c.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if now := c.Now(); now.Before(at.Add(time.Second)) {
		t.Errorf("after resume and a 1 s sleep the clock reads %v, want at least %v", now, at.Add(time.Second))
	}
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A claim that is behind holds lab time at Slack past its work, moves it
// on as the work catches up, and lets go when idle or when it has not
// moved for Grip of wall time; lab time never runs backwards meanwhile.
func TestClaimHoldsLabTime(t *testing.T) {
	c := New()
	c.SetSpeed(100)
	start := c.Now()
	cl := c.Claim()
	defer cl.Close()
	cl.Behind(start)
	wall0 := time.Now()
	deadline := wall0.Add(5 * time.Second)
	for time.Since(wall0) < Grip/2 {
		if now := c.Now(); now.Sub(start) > Slack {
			t.Fatalf("a claim behind at the start let lab time reach %v past it", now.Sub(start))
		}
		time.Sleep(time.Millisecond)
	}
	// The work catches up 1 s: lab time may go 1 s further, and no more.
	cl.Behind(start.Add(time.Second))
	for time.Now().Before(deadline) && c.Now().Sub(start) < time.Second+Slack {
		time.Sleep(time.Millisecond)
	}
	if got := c.Now().Sub(start); got != time.Second+Slack {
		t.Errorf("after the work moved 1 s on, lab time stands %v past the start, want %v", got, time.Second+Slack)
	}
	if c.Given() <= 0 || c.Behind() <= 0 {
		t.Errorf("a held clock says it gave up %v of lab time, a share %v of the last second's", c.Given(), c.Behind())
	}
	// Stuck: after Grip of wall time the clock goes on by itself.
	held := c.Now()
	ctx := ctxFor(t, 5*time.Second)
	if err := c.Sleep(ctx, time.Second); err != nil {
		t.Fatalf("a sleep past a claim that stopped moving: %v", err)
	}
	if c.Now().Before(held) {
		t.Error("lab time ran backwards")
	}
	// Idle: lab time runs freely at once.
	cl.Behind(c.Now())
	cl.Idle()
	before, wall := c.Now(), time.Now()
	if err := c.Sleep(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if w := time.Since(wall); w > time.Second {
		t.Errorf("5 s of lab time at 100x past an idle claim took %v of wall time", w)
	}
	if !c.Now().After(before) {
		t.Error("lab time did not move")
	}
}

// A sleeper whose time has come but who has not run yet holds lab time at
// Slack past it; once it has woken, the clock runs on.
func TestLateSleeperHoldsLabTime(t *testing.T) {
	c := New()
	c.SetSpeed(100)
	due := c.Now().Add(100 * time.Millisecond)
	c.mu.Lock()
	c.addSleeperLocked(due) // as SleepUntil does, for a goroutine the machine has not run
	c.mu.Unlock()
	wall := time.Now()
	for time.Since(wall) < 50*time.Millisecond {
		if now := c.Now(); now.After(due.Add(Slack)) {
			t.Fatalf("lab time reached %v past a sleeper that has not woken", now.Sub(due))
		}
		time.Sleep(time.Millisecond)
	}
	c.removeSleeper(due)
	ctx := ctxFor(t, 5*time.Second)
	if err := c.SleepUntil(ctx, due.Add(2*time.Second)); err != nil {
		t.Fatalf("after the sleeper woke: %v", err)
	}
}

// A claim on work due ahead holds nothing until lab time reaches it, and
// then holds for its grip however long ago it was made: a client that
// sleeps longer than Grip until its next message keeps it. (A reading
// the machine delays past the grip sees lab time let go, as it should:
// such an attempt is tried again.)
func TestClaimAheadHoldsWhenReached(t *testing.T) {
	held := func() (time.Duration, bool) {
		c := New()
		c.SetSpeed(100)
		cl := c.Claim()
		defer cl.Close()
		due := c.Now().Add(2 * Grip * 100) // twice Grip of wall time away
		cl.Behind(due)
		limit := due.Add(Slack)
		deadline := time.Now().Add(5 * time.Second)
		now := c.Now()
		for now.Before(limit) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			now = c.Now()
		}
		cl.Idle()
		if err := c.Sleep(ctxFor(t, 5*time.Second), time.Second); err != nil {
			t.Fatalf("after the claim went idle: %v", err)
		}
		return now.Sub(due), now.Equal(limit)
	}
	var past time.Duration
	for range 3 {
		var ok bool
		if past, ok = held(); ok {
			return
		}
	}
	t.Errorf("lab time reached %v past the claim's work, want it held at Slack (%v) past", past, Slack)
}

// A client behind that keeps asking for more and finds nothing (its
// messages are in flight until lab time passes their visibility) says
// Briefly at every ask without moving: its grip runs from the first ask,
// so lab time goes on after Grip instead of waiting for it for ever.
func TestBrieflyWithoutMovingLetsGo(t *testing.T) {
	c := New()
	cl := c.Claim()
	defer cl.Close()
	start := c.Now()
	cl.Behind(start)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the client's empty fetches
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				cl.Briefly(Grip)
			}
		}
	}()
	ctx := ctxFor(t, 10*Grip)
	if err := c.SleepUntil(ctx, start.Add(2*Slack)); err != nil {
		t.Fatalf("lab time stood %v past a claim that asked again and again without moving: %v", c.Now().Sub(start), err)
	}
	// A move renews the grip once more.
	cl.Behind(c.Now())
	cl.Briefly(Grip)
	if now := c.Now(); now.Sub(start) > 3*Slack {
		t.Errorf("after a move lab time ran on to %v past the start", now.Sub(start))
	}
}

// stall stands for a machine that does not run the lab's work for d of
// wall time. It says false when the test itself was not run for long
// enough that a hold's grip may have let go: the reading means nothing
// then, and the caller tries again.
func stall(d time.Duration) bool {
	start := time.Now()
	time.Sleep(d)
	return time.Since(start) < d+Grip/2
}

// tries runs f until it reports a meaningful reading, at most three times.
func tries(t *testing.T, f func() bool) {
	t.Helper()
	for range 3 {
		if f() {
			return
		}
	}
	t.Fatal("three tries in a row found the hold still held past its grip, or the machine stalled the test that long")
}

// A hold on work that happens at once keeps lab time within Brisk of wall
// time past the moment it came on, however long the machine stalls the
// work (up to Grip), and lets it go as soon as it is off.
func TestHoldKeepsLabTimeThroughAStall(t *testing.T) {
	tries(t, func() bool {
		c := New()
		h := c.Hold()
		defer h.Close()
		start := c.Now()
		h.On(start)
		if !stall(3 * Brisk) {
			return false
		}
		if got := c.Now().Sub(start); got > Brisk {
			t.Fatalf("lab time ran %v past work that was held at once, want at most %v", got, Brisk)
		}
		if c.Given() <= 0 {
			t.Error("a held clock says it gave up no lab time")
		}
		h.Off()
		held := c.Now()
		if err := c.Sleep(ctxFor(t, 5*time.Second), 3*Brisk); err != nil {
			t.Fatalf("after the hold went off: %v", err)
		}
		if !c.Now().After(held) {
			t.Error("lab time did not move after the hold went off")
		}
		return true
	})
}

// Work the machine is slow to run holds lab time for up to HoldGrip; work
// that waits on the broker for longer than Grip lets lab time go on: an
// election is lab time passing.
func TestHoldLetsGoAfterItsGrip(t *testing.T) {
	tries(t, func() bool {
		c := New()
		h := c.Hold()
		defer h.Close()
		start := c.Now()
		h.On(start)
		if !stall(2 * Grip) {
			return false
		}
		if got := c.Now().Sub(start); got > Brisk {
			t.Fatalf("lab time ran %v past runnable work after %v, want it held for up to %v", got, 2*Grip, HoldGrip)
		}
		// With the hold on, a sleep past it ends once the grip lets go.
		ctx := ctxFor(t, 5*time.Second)
		if err := c.SleepUntil(ctx, start.Add(2*Brisk)); err != nil {
			t.Fatalf("lab time stood %v past a hold that stopped moving: %v", c.Now().Sub(start), err)
		}
		// Asking the broker, it holds for Grip from the ask.
		h.On(c.Now())
		answered := h.Asking()
		asked := time.Now()
		if err := c.Sleep(ctx, 2*Brisk); err != nil {
			t.Fatal(err)
		}
		answered()
		w := time.Since(asked)
		if w < Grip {
			t.Errorf("a hold waiting on the broker held lab time for %v, want about %v", w, Grip)
		}
		// Held for HoldGrip, or a machine that did not wake the sleeper
		// for that long: try again, and fail if it keeps happening.
		return w < HoldGrip
	})
}

// At speed the Brisk of wall time a hold allows is that much more lab
// time: at 10x, 200 ms.
func TestHoldSlackFollowsSpeed(t *testing.T) {
	tries(t, func() bool {
		c := New()
		c.SetSpeed(10)
		h := c.Hold()
		defer h.Close()
		start := c.Now()
		h.On(start)
		if !stall(3 * Brisk) {
			return false
		}
		// 60 ms of wall time at 10x would be 600 ms.
		if got := c.Now().Sub(start); got != 10*Brisk {
			t.Fatalf("at 10x lab time stands %v past held work, want %v", got, 10*Brisk)
		}
		return true
	})
}

// A sleep on the clock under the hold's context sets the hold aside: the
// work waits on lab time, which must not wait for it in turn. Once the
// sleep is over the hold is on again from the time it slept to.
func TestHoldSetAsideWhileItsWorkSleeps(t *testing.T) {
	tries(t, func() bool {
		c := New()
		h := c.Hold()
		defer h.Close()
		ctx := h.Context(ctxFor(t, 5*time.Second))
		h.On(c.Now())
		given := c.Given()
		end := c.Now().Add(100 * time.Millisecond)
		if err := c.SleepUntil(ctx, end); err != nil {
			t.Fatal(err)
		}
		// Left on, the hold would have held lab time at Brisk for its whole
		// grip: Grip of lab time given up at 1x.
		if g := c.Given() - given; g >= Grip/2 {
			t.Errorf("a sleep under a hold gave up %v of lab time: the hold held its own sleep", g)
		}
		limit := later(c.Now(), end.Add(Brisk))
		if !stall(3 * Brisk) {
			return false
		}
		if now := c.Now(); now.After(limit) {
			t.Errorf("after the sleep lab time ran to %v past its end, want the hold on again", now.Sub(end))
		}
		// A sleep woken early turns the hold on from the wake.
		wake := make(chan struct{}, 1)
		wake <- struct{}{}
		if err := c.SleepOrWake(ctx, time.Hour, wake); err != nil {
			t.Fatal(err)
		}
		woke := c.Now()
		if !stall(3 * Brisk) {
			return false
		}
		if got := c.Now().Sub(woke); got > Brisk {
			t.Errorf("after a wake lab time ran %v on, want the hold on again", got)
		}
		// A hold that was off stays off through a sleep.
		h.Off()
		if err := c.Sleep(ctx, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		off := c.Now()
		time.Sleep(3 * Brisk)
		if got := c.Now().Sub(off); got < 3*Brisk {
			t.Errorf("a hold that was off held lab time after a sleep: %v passed in %v", got, 3*Brisk)
		}
		return true
	})
}
