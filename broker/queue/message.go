package queue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Errors callers branch on; each is wrapped with the specifics.
var (
	// ErrFull: the queue holds its max length; the send was rejected
	// (back-pressure: try again later).
	ErrFull = errors.New("queue full")
	// ErrUnknownReceipt: the receipt handle names no message in the queue
	// (acked, expired, dead-lettered, or never given out).
	ErrUnknownReceipt = errors.New("unknown receipt handle")
	// ErrStaleReceipt: the receipt handle belongs to an earlier delivery:
	// its visibility timeout ran out and the message was received again, or
	// it is back in the queue, or it is moving to another queue.
	ErrStaleReceipt = errors.New("stale receipt handle")
	// ErrNoDLQ: a dead-letter request on a queue that has none.
	ErrNoDLQ = errors.New("no dead-letter queue")
	// ErrBadCommand: a command that cannot be decoded or makes no sense.
	ErrBadCommand = errors.New("malformed queue command")
)

// MsgState is where a message is in its queue.
type MsgState uint8

// The states of a message held by a queue.
const (
	Ready    MsgState = iota + 1 // can be received now
	InFlight                     // received, invisible until its deadline, waiting for an ack
	Delayed                      // invisible until its due time (a send delay or a nack delay)
	Moving                       // leaving for another queue (dead-letter or redrive), not yet confirmed there
)

var stateNames = [...]string{"", "ready", "in-flight", "delayed", "moving"}

func (s MsgState) String() string {
	if int(s) < len(stateNames) && s != 0 {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the state's name, for snapshots.
func (s MsgState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *MsgState) UnmarshalText(p []byte) error {
	for i, n := range stateNames {
		if i > 0 && n == string(p) {
			*s = MsgState(i)
			return nil
		}
	}
	return fmt.Errorf("unknown message state %q", p)
}

// MoveKind says why a message moves to another queue.
type MoveKind uint8

// Why a message moves.
const (
	DeadLetter MoveKind = iota + 1 // max receives reached, or a consumer gave up on it
	Redrive                        // back from a dead-letter queue
)

func (k MoveKind) String() string {
	switch k {
	case DeadLetter:
		return "dead-letter"
	case Redrive:
		return "redrive"
	}
	return "move(" + strconv.Itoa(int(k)) + ")"
}

// Config is what a queue's state machine needs to know about its queue.
// It never changes after the queue is created.
type Config struct {
	Name string `json:"name"`
	// Visibility is the default visibility timeout of a receive.
	Visibility time.Duration `json:"visibility"`
	// MaxReceives moves a message to DLQ once it has been received that
	// many times without an ack. 0: no limit.
	MaxReceives int `json:"max_receives,omitempty"`
	// DLQ names the dead-letter queue, "" for none.
	DLQ string `json:"dlq,omitempty"`
	// MaxLength bounds the messages the queue holds. 0: unbounded.
	MaxLength int `json:"max_length,omitempty"`
	// Overflow is what a send to a full queue does: OverflowReject (the
	// default) refuses it, as RabbitMQ's reject-publish does;
	// OverflowDropHead makes room by dropping the oldest ready message,
	// RabbitMQ's default. With nothing ready to drop, the send is refused.
	Overflow string `json:"overflow,omitempty"`
	// TTL drops a message that has waited that long since it entered the
	// queue, before anyone could ack it. 0: messages live until acked.
	TTL time.Duration `json:"ttl,omitempty"`
	// FIFO delivers each message group in order, one message of a group
	// in flight at a time, and drops a send that repeats a deduplication
	// id within DedupeWindow (see AttrGroup, AttrDedupe).
	FIFO bool `json:"fifo,omitempty"`
}

// What a send to a full queue does (Config.Overflow).
const (
	OverflowReject   = "reject"
	OverflowDropHead = "drop-head"
)

// Message is one message held by a queue.
type Message struct {
	Seq        uint64            `json:"seq"` // the queue's own number for it, in arrival order
	MsgID      string            `json:"msg_id"`
	Body       []byte            `json:"body,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	SentAt     int64             `json:"sent_at"`     // when a client first sent it, unix nanos
	EnqueuedAt int64             `json:"enqueued_at"` // when it entered this queue (TTL and age count from here)
	State      MsgState          `json:"state"`
	// Due is the visibility deadline of an in-flight message, or when a
	// delayed one becomes ready.
	Due          int64    `json:"due,omitempty"`
	ReceiveCount int      `json:"receive_count"`
	Consumer     string   `json:"consumer,omitempty"`   // who holds it in flight (the last receiver otherwise)
	LastError    string   `json:"last_error,omitempty"` // the last failure reason a consumer gave
	Source       string   `json:"source,omitempty"`     // in a dead-letter queue: the queue it came from
	Redrives     int      `json:"redrives,omitempty"`   // times it was redriven from a dead-letter queue
	MoveTo       string   `json:"move_to,omitempty"`    // moving: where to
	MoveKind     MoveKind `json:"move_kind,omitempty"`

	gen uint32 // bumped on every state change; heap entries of older gens are stale
}

// Receipt is the handle of the message's latest delivery.
func (m *Message) Receipt() string { return Receipt(m.Seq, m.ReceiveCount) }

// Receipt formats the handle of delivery number count of message seq:
// "m7-r2" is message 7, second receive. A handle is only good for the
// delivery it came with.
func Receipt(seq uint64, count int) string {
	return "m" + strconv.FormatUint(seq, 10) + "-r" + strconv.Itoa(count)
}

// ParseReceipt reads a handle made by Receipt.
func ParseReceipt(s string) (seq uint64, count int, err error) {
	bad := fmt.Errorf("%w: %q is not a receipt handle this queue gave out (they look like m7-r2)", ErrUnknownReceipt, s)
	rest, ok := strings.CutPrefix(s, "m")
	if !ok {
		return 0, 0, bad
	}
	a, b, ok := strings.Cut(rest, "-r")
	if !ok {
		return 0, 0, bad
	}
	seq, err1 := strconv.ParseUint(a, 10, 64)
	c, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || seq == 0 || c < 1 {
		return 0, 0, bad
	}
	return seq, c, nil
}

// TransferID names one move of one message out of a queue. A message
// leaves a queue once and sequence numbers are never reused, so the id is
// unique for ever; the destination deduplicates by it.
func TransferID(queue string, seq uint64) string {
	return queue + "#" + strconv.FormatUint(seq, 10)
}

// Counts are a queue's gauges and counters. Every message that entered
// (Sent + MovedIn) is accounted for exactly once:
//
//	Sent + MovedIn = Acked + DeadLettered + Redriven + Expired + Dropped
//	                 + Ready + InFlight + Delayed + Moving
//
// Rejected sends never entered and are counted apart.
type Counts struct {
	Ready    int `json:"ready"`
	InFlight int `json:"in_flight"`
	Delayed  int `json:"delayed"`
	Moving   int `json:"moving"`

	Sent         uint64 `json:"sent"`          // accepted from clients
	MovedIn      uint64 `json:"moved_in"`      // arrived from another queue (dead-lettered or redriven here)
	Acked        uint64 `json:"acked"`         // deleted by a consumer's ack
	DeadLettered uint64 `json:"dead_lettered"` // moved out to the dead-letter queue
	Redriven     uint64 `json:"redriven"`      // moved out by a redrive
	Expired      uint64 `json:"expired"`       // dropped by TTL, never delivered again
	Dropped      uint64 `json:"dropped"`       // dropped from the head to make room (overflow drop-head)
	Rejected     uint64 `json:"rejected"`      // sends refused because the queue was full
	Deliveries   uint64 `json:"deliveries"`    // receives handed out, first ones and repeats
	Redeliveries uint64 `json:"redeliveries"`  // deliveries with a receive count above 1
	Nacks        uint64 `json:"nacks"`
	Timeouts     uint64 `json:"timeouts"` // visibility timeouts that ran out
}

// Depth is what the queue holds: ready, in flight and delayed (messages
// moving out are not counted).
func (c Counts) Depth() int { return c.Ready + c.InFlight + c.Delayed }

// Held is every message still in the queue, moving ones included.
func (c Counts) Held() int { return c.Ready + c.InFlight + c.Delayed + c.Moving }

// Balanced reports whether the accounting identity holds, and if not, the
// two sides.
func (c Counts) Balanced() (ok bool, in, out uint64) {
	in = c.Sent + c.MovedIn
	out = c.Acked + c.DeadLettered + c.Redriven + c.Expired + c.Dropped + uint64(c.Held())
	return in == out, in, out
}
