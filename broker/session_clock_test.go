package broker

import (
	"testing"
	"testing/synctest"
	"time"
)

// The session clock runs at the slower of wall time and lab time: with
// the lab at half speed it counts half the wall's time, paused nothing,
// and at 2x it keeps to the wall, which clients heartbeat on.
func TestSessionClockRunsAtTheSlowerPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wallBase, labBase, rate := time.Now(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0.5
		lab := func() time.Time { return labBase.Add(time.Duration(float64(time.Since(wallBase)) * rate)) }
		setRate := func(r float64) { labBase, wallBase, rate = lab(), time.Now(), r }
		s := newSessionClock(lab)
		t0 := s.Now()
		for _, step := range []struct {
			rate       float64
			wall, want time.Duration
		}{
			{0.5, 2 * time.Second, time.Second},
			{0, 3 * time.Second, 0},
			{2, time.Second, time.Second},
			{1, time.Second, time.Second},
		} {
			setRate(step.rate)
			from := s.Now()
			time.Sleep(step.wall)
			if got := s.Now().Sub(from); got != step.want {
				t.Errorf("lab at %vx for %v of wall time: the session clock moved %v, want %v", step.rate, step.wall, got, step.want)
			}
		}
		if got := s.Now().Sub(t0); got != 3*time.Second {
			t.Errorf("in all %v, want 3s", got)
		}
	})
}
