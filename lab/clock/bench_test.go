package clock

import (
	"testing"
	"time"
)

// Now is read on every record, event and sleep: it must stay cheap with
// the claims a busy lab has (a load, a few paced clients, clients at work).
func BenchmarkNow(b *testing.B) {
	c := New()
	c.SetSpeed(10)
	start := c.Now()
	for i := range 8 {
		cl := c.Claim()
		defer cl.Close()
		if i%2 == 0 {
			cl.Behind(start.Add(time.Hour)) // due ahead: holds nothing yet
		}
	}
	b.ResetTimer()
	for b.Loop() {
		c.Now()
	}
}

// A sleep that is already over, as a paced client's is when it is late.
func BenchmarkSleepPast(b *testing.B) {
	c := New()
	ctx := ctxFor(b, time.Minute)
	past := c.Now()
	for b.Loop() {
		if err := c.SleepUntil(ctx, past); err != nil {
			b.Fatal(err)
		}
	}
}
