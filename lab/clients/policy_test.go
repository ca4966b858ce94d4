package clients

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
)

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// commandOptions parses client options as a consumer start would.
func commandOptions(t testing.TB, opts string) command.ClientOptions {
	t.Helper()
	cmd, err := command.Parse("consumer start c group=g topic=t " + opts)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.(command.Consumer).Options
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Backoff: exponential from base up to cap, with full, equal or no jitter.
func TestBackoff(t *testing.T) {
	p := Policy{Retry: "backoff", Base: 100 * time.Millisecond, Cap: time.Second, Jitter: "none"}
	rng := newTestRand()
	var got []time.Duration
	for a := 1; a <= 6; a++ {
		got = append(got, p.Backoff(a, rng))
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Errorf("no jitter: attempt %d waits %v, want %v", i+1, got[i], want[i]*time.Millisecond)
		}
	}
	for _, tc := range []struct {
		jitter   string
		min, max time.Duration
	}{{"full", 0, 800 * time.Millisecond}, {"equal", 400 * time.Millisecond, 800 * time.Millisecond}} {
		p.Jitter = tc.jitter
		lo, hi := time.Hour, time.Duration(0)
		for range 200 {
			d := p.Backoff(4, rng)
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo < tc.min || hi > tc.max || hi-lo < (tc.max-tc.min)/2 {
			t.Errorf("jitter %s after attempt 4: from %v to %v; want spread over [%v, %v]", tc.jitter, lo, hi, tc.min, tc.max)
		}
	}
	if d := (Policy{Retry: "immediate", Base: time.Second}).Backoff(3, rng); d != 0 {
		t.Errorf("retry=immediate waits %v", d)
	}
	if p := PolicyOf(commandOptions(t, "max-attempts=4")); p.Retry != "immediate" || p.MaxAttempts != 4 {
		t.Errorf("max-attempts alone: %+v", p)
	}
	if p := PolicyOf(commandOptions(t, "")); p.Retry != "none" || p.MaxAttempts != 1 {
		t.Errorf("defaults: %+v", p)
	}
}

// The pacer: a first message goes at once, the next after 1/rate; after a
// rest the gap since the last message still holds.
func TestPacerKeepsTheGapAfterARest(t *testing.T) {
	c := clock.New()
	c.Pause()
	ctx := ctxFor(t, 5*time.Second)
	var pc Pacer
	start := c.Now()
	if !pc.Wait(ctx, c, 10) || !c.Now().Equal(start) {
		t.Fatalf("the first message waited until %v", c.Now())
	}
	pc.Rest()
	if pc.Wait(ctxFor(t, 50*time.Millisecond), c, 10) {
		t.Errorf("after a rest, the second message did not wait for its 100 ms gap")
	}
}
