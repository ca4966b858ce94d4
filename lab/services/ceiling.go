package services

import (
	"context"
	"sync"
	"time"
)

// bucket is a token bucket on the lab clock: the database's write ceiling.
// A writer reserves a token under the lock and then waits outside it, so a
// wait never blocks the other writers' reservations.
type bucket struct {
	rate  float64 // tokens per second of lab time
	burst float64
	clock Clock
	sleep Sleeper

	mu     sync.Mutex
	tokens float64
	last   time.Time
	// counters for WriteStats
	writes    int64
	throttled int64
	waited    time.Duration
}

func newBucket(rate float64, clock Clock, sleep Sleeper) *bucket {
	if rate <= 0 {
		return nil
	}
	return &bucket{rate: rate, burst: 1, clock: clock, sleep: sleep, tokens: 1}
}

// wait takes one token, waiting on the lab clock until it is there.
func (b *bucket) wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	now := b.clock()
	if b.last.IsZero() {
		b.last = now
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens += el.Seconds() * b.rate
		if b.tokens > b.burst {
			b.tokens = b.burst
		}
		b.last = now
	}
	b.tokens--
	var d time.Duration
	if b.tokens < 0 {
		d = time.Duration(-b.tokens / b.rate * float64(time.Second))
		b.throttled++
		b.waited += d
	}
	b.writes++
	b.mu.Unlock()
	if d == 0 {
		return nil
	}
	if err := b.sleep.Sleep(ctx, d); err != nil {
		b.mu.Lock()
		b.tokens++ // give the reservation back
		b.writes--
		b.mu.Unlock()
		return err
	}
	return nil
}

// WriteStats tells how a database's write ceiling has held writers back.
type WriteStats struct {
	DB        string
	Ceiling   float64       // writes per second of lab time; 0 = none
	Writes    int64         // write transactions admitted
	Throttled int64         // of those, how many had to wait
	Waited    time.Duration // lab time spent waiting, summed over writers
}

func (b *bucket) stats() (s WriteStats) {
	if b == nil {
		return s
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return WriteStats{Ceiling: b.rate, Writes: b.writes, Throttled: b.throttled, Waited: b.waited}
}
