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
