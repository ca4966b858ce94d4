package queue

// Reading a queue without changing anything: copies of messages for
// display, and what the leader asks before it proposes a tick or a
// receive.

import (
	"maps"
	"time"
)

// Get returns a copy of message seq.
func (q *Queue) Get(seq uint64) (Message, bool) {
	m := q.msgs[seq]
	if m == nil {
		return Message{}, false
	}
	return copyMessage(m), true
}

func copyMessage(m *Message) Message {
	c := *m
	c.Body = append([]byte(nil), m.Body...)
	c.Attributes = maps.Clone(m.Attributes)
	return c
}

// Window returns copies of the n oldest messages held, in arrival order.
func (q *Queue) Window(n int) []Message {
	var out []Message
	for _, seq := range q.order[q.head:] {
		if len(out) >= n {
			break
		}
		if m := q.msgs[seq]; m != nil {
			out = append(out, copyMessage(m))
		}
	}
	return out
}

// OldestAge is how long the oldest message held has been in the queue at
// time now (0 when empty): the signal to add consumers on.
func (q *Queue) OldestAge(now int64) time.Duration {
	if q.head >= len(q.order) {
		return 0
	}
	m := q.msgs[q.order[q.head]]
	if m == nil || now < m.EnqueuedAt {
		return 0
	}
	return time.Duration(now - m.EnqueuedAt)
}

// NextDue is the earliest time a deadline, delay or TTL may take effect,
// so a leader knows when a tick would change something. (It is early only
// for a TTL that falls while its message is in flight.)
func (q *Queue) NextDue() (int64, bool) {
	if len(q.timers) == 0 {
		return 0, false
	}
	return q.timers[0].at, true
}

// CanDeliver reports whether a receive by consumer at time now would
// likely hand out a message, so that a long poll proposes only then.
func (q *Queue) CanDeliver(now int64, consumer string, limit int) bool {
	due := len(q.timers) > 0 && q.timers[0].at <= now
	if limit > 0 && q.inflightBy[consumer] >= limit && !due {
		return false
	}
	if q.cfg.FIFO && !due {
		return q.anyGroupFree()
	}
	return q.counts.Ready > 0 || due
}

// InFlightBy is how many messages consumer holds in flight.
func (q *Queue) InFlightBy(consumer string) int { return q.inflightBy[consumer] }
