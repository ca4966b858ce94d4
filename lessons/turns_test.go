package lessons

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// longestPlays are the lessons whose plays take longest, longest first,
// by the wall time of all their plays (audit, reading pace, mutations) on
// fast timing: the-log's take about 160 s, why-a-queue's 60 s. Their plays
// take turns before the others, so the package does not end waiting on
// one of them that started last. The order changes nothing but when a
// play starts.
var longestPlays = []string{"the-log", "back-pressure", "fifo-queues", "partition-sizing", "flash-sale",
	"your-own-sqs-worker", "queues", "retries", "why-a-queue"}

// playRank is how early a lesson's play should start: higher first.
func playRank(id string) int {
	if i := slices.Index(longestPlays, id); i >= 0 {
		return len(longestPlays) - i
	}
	return 0
}

// gather is how long turns wait, after the first play asks, before
// handing any out: the curriculum's plays all ask within a few
// milliseconds of each other, and the longest should go first.
const gather = 100 * time.Millisecond

// turns hands a fixed number of turns to the plays that ask for one,
// the highest rank first and, within a rank, the first to ask.
type turns struct {
	mu      sync.Mutex
	free    int
	opens   time.Time // zero until the first play asks
	waiting []*turnWaiter
}

type turnWaiter struct {
	rank  int
	ready chan struct{}
}

func newTurns(n int) *turns { return &turns{free: n} }

// take waits for a turn for a play of rank and returns its release.
func (ts *turns) take(rank int) (release func()) {
	w := &turnWaiter{rank: rank, ready: make(chan struct{})}
	ts.mu.Lock()
	ts.waiting = append(ts.waiting, w)
	if ts.opens.IsZero() {
		ts.opens = time.Now().Add(gather)
		time.AfterFunc(gather, ts.handOut)
	}
	ts.mu.Unlock()
	ts.handOut()
	<-w.ready
	return func() {
		ts.mu.Lock()
		ts.free++
		ts.mu.Unlock()
		ts.handOut()
	}
}

// handOut gives free turns to the best waiting plays, once turns open.
func (ts *turns) handOut() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if time.Now().Before(ts.opens) {
		return
	}
	for ts.free > 0 && len(ts.waiting) > 0 {
		best := 0
		for i, w := range ts.waiting {
			if w.rank > ts.waiting[best].rank {
				best = i
			}
		}
		close(ts.waiting[best].ready)
		ts.waiting = slices.Delete(ts.waiting, best, best+1)
		ts.free--
	}
}

// playsALab starts a test that plays a lab of its own beside the
// curriculum's plays, taking a turn as they do: it need not wait for them
// to start, nor they for it.
func playsALab(t *testing.T) {
	t.Parallel()
	t.Cleanup(playTurns.take(0))
}
