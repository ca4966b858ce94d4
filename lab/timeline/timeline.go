// Package timeline is the lab's story of what happened, in order: the
// commands and what they said, what the broker, the services and the
// clients did. It keeps the recent events for the screens and fans every
// event out to subscribers (a screen, a recording, a transcript).
package timeline

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/fanout"
)

// Kind says where a timeline event comes from.
type Kind string

// Kinds of timeline event.
const (
	Broker  Kind = "broker"  // something the broker reported (Broker holds it)
	Command Kind = "command" // a command began: its text, node references resolved
	Outcome Kind = "outcome" // what a command did: a produce's outcomes, a new leader
	Load    Kind = "load"    // a generator started, stopped or finished
	Clock   Kind = "clock"   // speed, pause, resume
	Wait    Kind = "wait"    // a wait held
	Expect  Kind = "expect"  // an expectation held (✓) or not (✗)
	Check   Kind = "check"   // the checker's report
	Error   Kind = "error"   // a command failed after it began
	SQL     Kind = "sql"     // a statement a service ran (Service holds its SQL and arguments)
	Service Kind = "service" // a step of a service's work: an order placed, a publish, a credit, a crash
	Note    Kind = "note"    // said from outside the lab's commands: a challenge's kills of the learner's program
	Client  Kind = "client"  // what a background client did: a crash, a record it gave up on, a failed commit
)

// Event is one line of the timeline.
type Event struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"` // lab time
	Wall time.Time `json:"wall"`
	Kind Kind      `json:"kind"`
	Text string    `json:"text"`
	// Line is the script line a command event came from, when known.
	Line int `json:"line,omitempty"`
	// Detail marks the many small events (appends, commits, raft's log)
	// that a screen may hide; Snapshot's timeline leaves them out.
	Detail  bool          `json:"detail,omitempty"`
	Broker  *broker.Event `json:"broker,omitempty"`
	Service *ServiceEvent `json:"service,omitempty"`
}

// Internal reports whether the event is about the broker's own machinery
// rather than the learner's topics and queues: the controller, or an
// internal topic such as __consumer_offsets. A transcript leaves these out;
// the screen's timeline keeps them.
func (e Event) Internal() bool {
	if e.Broker != nil && (e.Broker.Group == "controller" || InternalName(e.Broker.Group)) {
		return true
	}
	return strings.Contains(e.Text, broker.OffsetsTopic)
}

// InternalName reports whether a topic, partition or raft group's name is
// one of the broker's internal topics ("__consumer_offsets/0").
func InternalName(name string) bool { return broker.IsInternalTopic(name) }

func (e Event) String() string {
	return fmt.Sprintf("%s %-7s %s", e.Time.Format("15:04:05.000"), e.Kind, e.Text)
}

// ServiceEvent is what a service reported: one SQL statement it ran, with
// its arguments, or a step of its work.
type ServiceEvent struct {
	Service      string `json:"service"`
	DB           string `json:"db,omitempty"`
	Kind         string `json:"kind"` // sql, order-placed, published, effect, crashed, …
	SQL          string `json:"sql,omitempty"`
	Args         []any  `json:"args,omitempty"`
	RowsAffected int64  `json:"rows_affected,omitempty"` // writes; -1 when not known
	Rows         int    `json:"rows,omitempty"`          // reads: rows returned
	MsgID        string `json:"msg_id,omitempty"`
	Key          string `json:"key,omitempty"`
	Detail       string `json:"detail,omitempty"`
	Err          string `json:"error,omitempty"`
}

// DetailKind says whether a broker event is of the kinds too many and too
// small for the timeline: appends, commits, raft's own log.
func DetailKind(k broker.EventKind) bool { return detailKinds[k] }

var detailKinds = map[broker.EventKind]bool{
	broker.EventAppend: true, broker.EventCommit: true, broker.EventRaftLog: true, broker.EventProducerID: true,
}

// Timeline keeps the recent events and fans every event out to
// subscribers. Its lock also orders what its owner adds under it (Lock,
// AddLocked): the lab puts a broker event in once, in broker order.
type Timeline struct {
	mu   sync.Mutex
	seq  uint64
	size int
	ring []Event // the last size events that are not Detail
	subs fanout.Set[Event]
}

// New returns a timeline that keeps the last size events that are not
// Detail.
func New(size int) *Timeline {
	return &Timeline{size: size}
}

// Add numbers e, keeps it and sends it to every subscriber.
func (t *Timeline) Add(e Event) Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.AddLocked(e)
}

// Lock holds the timeline: nothing is added until Unlock but by AddLocked.
func (t *Timeline) Lock() { t.mu.Lock() }

// Unlock lets others add again.
func (t *Timeline) Unlock() { t.mu.Unlock() }

// AddLocked is Add while the caller holds the timeline (Lock).
func (t *Timeline) AddLocked(e Event) Event {
	t.seq++
	e.Seq = t.seq
	if e.Wall.IsZero() {
		e.Wall = time.Now()
	}
	if !e.Detail {
		t.ring = append(t.ring, e)
		if len(t.ring) > t.size {
			t.ring = append(t.ring[:0:0], t.ring[len(t.ring)-t.size:]...)
		}
	}
	t.subs.Send(e)
	return e
}

// Recent returns up to n of the newest events that are not Detail.
func (t *Timeline) Recent(n int) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := max(0, len(t.ring)-n)
	return append([]Event(nil), t.ring[from:]...)
}

// Subscription delivers every timeline event, Detail ones included, as it
// happens. A subscriber that falls behind loses events rather than slowing
// the lab; Dropped counts them.
type Subscription = fanout.Subscription[Event]

// Subscribe streams every event from now on; buffer 0 means 4096.
func (t *Timeline) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = 4096
	}
	return t.subs.Subscribe(buffer)
}

// Close ends every subscription.
func (t *Timeline) Close() { t.subs.CloseAll() }

// Number writes a rate or a probability as the lab's lines do: two
// decimals, and none for a whole number (400, 0.25).
func Number(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.2f", f), ".00") }
