package lab

// throughput(Q): how many messages a queue's workers finished, acked, in
// the last second of lab time. A second worker on a backlog shows up here
// as a doubled rate before it shows up as a queue that drains sooner.

import (
	"sync"
	"time"
)

// throughputWindow is the stretch of lab time throughput(Q) counts over.
const throughputWindow = time.Second

// ackTimes is when each queue's recent acks happened; its zero value is
// ready to use.
type ackTimes struct {
	mu      sync.Mutex
	byQueue map[string][]time.Time // lab times, oldest first, the last window's
}

// add records an ack on queue q at lab time t.
func (a *ackTimes) add(q string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byQueue == nil {
		a.byQueue = map[string][]time.Time{}
	}
	ts := append(a.byQueue[q], t)
	a.byQueue[q] = ts[countBefore(ts, t.Add(-throughputWindow)):]
}

// perSecond is the number of acks on q within the window that ends at now.
func (a *ackTimes) perSecond(q string, now time.Time) float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, t := range a.byQueue[q] {
		if t.After(now.Add(-throughputWindow)) && !t.After(now) {
			n++
		}
	}
	return float64(n) / throughputWindow.Seconds()
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
