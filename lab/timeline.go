package lab

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/fanout"
)

// EventKind says where a timeline event comes from.
type EventKind string

// Kinds of timeline event.
const (
	EventBroker  EventKind = "broker"  // something the broker reported (Broker holds it)
	EventCommand EventKind = "command" // a command began: its text, node references resolved
	EventOutcome EventKind = "outcome" // what a command did: a produce's outcomes, a new leader
	EventLoad    EventKind = "load"    // a generator started, stopped or finished
	EventClock   EventKind = "clock"   // speed, pause, resume
	EventWait    EventKind = "wait"    // a wait held
	EventExpect  EventKind = "expect"  // an expectation held (✓) or not (✗)
	EventCheck   EventKind = "check"   // the checker's report
	EventError   EventKind = "error"   // a command failed after it began
	EventSQL     EventKind = "sql"     // a statement a service ran (Service holds its SQL and arguments)
	EventService EventKind = "service" // a step of a service's work: an order placed, a publish, a credit, a crash
	EventNote    EventKind = "note"    // said from outside the lab's commands: a challenge's kills of the learner's program
)

// Event is one line of the timeline.
type Event struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"` // lab time
	Wall time.Time `json:"wall"`
	Kind EventKind `json:"kind"`
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

// detailKinds are broker events too many and too small for the timeline.
var detailKinds = map[broker.EventKind]bool{
	broker.EventAppend: true, broker.EventCommit: true, broker.EventRaftLog: true, broker.EventProducerID: true,
}

// timeline keeps the recent events and fans every event out to subscribers.
type timeline struct {
	mu   sync.Mutex
	seq  uint64
	size int
	ring []Event // the last size events that are not Detail
	subs fanout.Set[Event]
}

func newTimeline(size int) *timeline {
	return &timeline{size: size}
}

func (t *timeline) add(e Event) Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addLocked(e)
}

func (t *timeline) addLocked(e Event) Event {
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

// recent returns up to n of the newest events that are not Detail.
func (t *timeline) recent(n int) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	from := max(0, len(t.ring)-n)
	return append([]Event(nil), t.ring[from:]...)
}

// Subscription delivers every timeline event, Detail ones included, as it
// happens. A subscriber that falls behind loses events rather than slowing
// the lab; Dropped counts them.
type Subscription = fanout.Subscription[Event]

func (t *timeline) subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = 4096
	}
	return t.subs.Subscribe(buffer)
}

func (t *timeline) close() { t.subs.CloseAll() }
