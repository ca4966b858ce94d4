package clients

// throughput(X): how many messages a group's consumers or a queue's
// workers finished in the last second of lab time. A second worker on a
// backlog shows up here as a doubled rate before it shows up as a queue
// that drains sooner.

import (
	"sync"
	"time"
)

// ThroughputWindow is the stretch of lab time throughput(X) counts over.
const ThroughputWindow = time.Second

// Finished is when the work on each group's or queue's recent messages
// finished; its zero value is ready to use.
type Finished struct {
	mu      sync.Mutex
	byQueue map[string][]time.Time // lab times, oldest first, the last window's
}

// Add records work finished on group or queue q at lab time t.
func (a *Finished) Add(q string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byQueue == nil {
		a.byQueue = map[string][]time.Time{}
	}
	ts := append(a.byQueue[q], t)
	a.byQueue[q] = ts[countBefore(ts, t.Add(-ThroughputWindow)):]
}

// PerSecond is the work finished on q within the window that ends at now.
func (a *Finished) PerSecond(q string, now time.Time) float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, t := range a.byQueue[q] {
		if t.After(now.Add(-ThroughputWindow)) && !t.After(now) {
			n++
		}
	}
	return float64(n) / ThroughputWindow.Seconds()
}

// countBefore is how many of the leading times are not after cut. The
// times come in roughly in order; one that arrives late is kept until
// the times before it are gone.
func countBefore(ts []time.Time, cut time.Time) int {
	n := 0
	for n < len(ts) && !ts[n].After(cut) {
		n++
	}
	return n
}
