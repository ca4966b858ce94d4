package clients

// The retries consumers and workers schedule: a retry is a failed attempt
// that another attempt will follow. retries(X) counts them and
// retry_peak(X) reads the most of them that arrived within one
// RetryWindow: the moment the next attempt really reached its client, not
// the moment the client asked for, so a queue that handed a nacked message
// back before its delay shows the burst it caused.

import (
	"slices"
	"sync"
	"time"
)

// Retry is one retry a consumer or worker scheduled.
type Retry struct {
	Client  string        `json:"client"`
	Message string        `json:"message"` // the message id
	Attempt int           `json:"attempt"` // the attempt this retry will be (2 = the first retry)
	Failed  time.Time     `json:"failed"`  // lab time the attempt failed
	Delay   time.Duration `json:"delay"`   // the backoff chosen (0 for immediate)
	// Arrived is the lab time the retry's attempt began: a worker received
	// the message again, or a consumer tried the record again. Zero while
	// it has not (yet) come back.
	Arrived time.Time `json:"arrived,omitzero"`
}

// Due is the lab time the retry was asked for: when the failed attempt's
// backoff runs out.
func (r Retry) Due() time.Time { return r.Failed.Add(r.Delay) }

const (
	// SnapshotRetries is how many of the most recent retries a snapshot
	// carries.
	SnapshotRetries = 500
	// retriesKept bounds the retries the values read: retry_peak(X) looks
	// at the most recent ones. retries(X) counts them all.
	retriesKept = 10000
	// RetryWindow is retry_peak's window: short next to a backoff of a
	// second, long next to the milliseconds a client takes to fail a
	// backlog of messages one after another.
	RetryWindow = 100 * time.Millisecond
)

// Retries is one world's retries; its zero value is ready to use.
type Retries struct {
	mu    sync.Mutex
	kept  []retryRecord  // oldest first
	count map[string]int // client, queue or group → retries scheduled
}

// retryRecord is a retry with where the message lives.
type retryRecord struct {
	Retry
	of string // its queue, or its consumer group
}

// Add records a retry client scheduled for a message of queue or group of.
func (rl *Retries) Add(of string, r Retry) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.count == nil {
		rl.count = map[string]int{}
	}
	rl.count[r.Client]++
	if of != r.Client {
		rl.count[of]++
	}
	if len(rl.kept) >= retriesKept {
		n := copy(rl.kept, rl.kept[len(rl.kept)-retriesKept+1:])
		rl.kept = rl.kept[:n]
	}
	rl.kept = append(rl.kept, retryRecord{Retry: r, of: of})
}

// Arrived notes that attempt of message msgID, of queue or group of,
// began at lab time at. It settles the most recent retry scheduled for
// that attempt that has not arrived yet; an attempt no retry asked for (a
// redelivery after a visibility timeout, a redrive) settles none, and
// false says so.
func (rl *Retries) Arrived(of, msgID string, attempt int, at time.Time) bool {
	return rl.ArrivedAsked(of, msgID, attempt, at, time.Time{})
}

// ArrivedAsked is Arrived for a message a worker received on a receive
// it began at lab time asked. A worker already waiting when the retry
// fell due has it back at once in lab time, so a retry that reached it
// later (the machine was slow to hand it over) arrived when due: the
// lateness was the machine's, and counting it would bunch retries that
// came back apart. One handed back early, before it was due, keeps its
// own time.
func (rl *Retries) ArrivedAsked(of, msgID string, attempt int, at, asked time.Time) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for i := len(rl.kept) - 1; i >= 0; i-- {
		r := &rl.kept[i]
		if r.Message == msgID && r.Attempt == attempt && r.of == of && r.Arrived.IsZero() {
			if due := r.Due(); !asked.IsZero() && !asked.After(due) && at.After(due) {
				at = due
			}
			r.Arrived = at
			return true
		}
	}
	return false
}

// Recent returns the n most recent retries, oldest first.
func (rl *Retries) Recent(n int) []Retry {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	from := max(0, len(rl.kept)-n)
	if from == len(rl.kept) {
		return nil
	}
	out := make([]Retry, 0, len(rl.kept)-from)
	for _, r := range rl.kept[from:] {
		out = append(out, r.Retry)
	}
	return out
}

// Total is how many retries name (a client, queue or group) scheduled.
func (rl *Retries) Total(name string) int {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.count[name]
}

// Peak is the most of name's retries that arrived within any one window
// of lab time. A retry not yet back counts nowhere: the peak reads what
// the queue and the client did, not what the client's policy asked for.
func (rl *Retries) Peak(name string, window time.Duration) int {
	rl.mu.Lock()
	var arrived []time.Time
	for _, r := range rl.kept {
		if (r.Client == name || r.of == name) && !r.Arrived.IsZero() {
			arrived = append(arrived, r.Arrived)
		}
	}
	rl.mu.Unlock()
	return peakWithin(arrived, window)
}

// PeakOf is the most of client's retries among rs that arrived within
// one RetryWindow: what retry_peak(client) reads when rs holds all its
// retries (a snapshot carries the most recent SnapshotRetries). A screen
// that draws rs reads its peak here, so it shows the number the lab value
// gives.
func PeakOf(rs []Retry, client string) int {
	var arrived []time.Time
	for _, r := range rs {
		if r.Client == client && !r.Arrived.IsZero() {
			arrived = append(arrived, r.Arrived)
		}
	}
	return peakWithin(arrived, RetryWindow)
}

// peakWithin is the most of times that fall within one window [t, t+window).
func peakWithin(times []time.Time, window time.Duration) int {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	best, from := 0, 0
	for to := range times {
		for times[to].Sub(times[from]) >= window {
			from++
		}
		best = max(best, to-from+1)
	}
	return best
}
