package broker

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker/fanout"
)

// EventKind names what happened.
type EventKind string

// The kinds of event the broker reports.
const (
	EventLeaderElected  EventKind = "leader-elected"  // a replica won an election: Node leads Group at Epoch
	EventSteppedDown    EventKind = "stepped-down"    // a leader lost leadership
	EventAppend         EventKind = "append"          // a replica stored entries in its log: offsets From..To (To exclusive), maybe not yet committed
	EventCommit         EventKind = "commit"          // the leader's high-water mark moved to To
	EventTruncation     EventKind = "truncation"      // a replica cut its uncommitted tail: offsets From..To of Epochs
	EventSegmentDeleted EventKind = "segment-deleted" // retention deleted a closed segment; the log now starts at To
	EventTopicCreated   EventKind = "topic-created"
	EventProducerID     EventKind = "producer-id" // the controller handed out a producer id
	EventNodeKilled     EventKind = "node-killed"
	EventNodeRestarted  EventKind = "node-restarted"
	EventLinkCut        EventKind = "link-cut"
	EventLinkHealed     EventKind = "link-healed"
	EventSlow           EventKind = "slow"
	EventFaultArmed     EventKind = "fault-armed" // a lost reply or lost ack waits for a client's next request
	EventFaultFired     EventKind = "fault-fired" // an armed fault bit: the reply or the ack was lost
	EventLeaderTransfer EventKind = "leader-transfer"
	EventRaftLog        EventKind = "raft-log" // a line of raft's own log, when Config.RaftLog asks for them
)

// Event is one thing that happened in the cluster. Fields that do not apply
// to a kind are zero.
type Event struct {
	Seq    uint64
	Time   time.Time
	Kind   EventKind
	Node   string // the node it happened on
	Group  string // "orders/0", or "controller"
	Epoch  uint64
	From   int64 // an offset range, To exclusive
	To     int64
	Epochs []uint64 // epochs of truncated entries
	Client string
	MsgID  string // the message a queue event is about
	Text   string // one readable sentence

	// Consumer group events: the group, the member and the generation.
	ConsumerGroup string
	Member        string
	Generation    int

	// lazy marks an append or commit event whose Text is still to be
	// written: one of each per produced batch, with its sentence
	// determined by the other fields, so the bus writes it only when the
	// event leaves it (to a subscriber or through since) and a cluster
	// nobody watches never formats one.
	lazy bool
}

// fillText writes a lazy event's sentence.
func (e *Event) fillText() {
	if !e.lazy {
		return
	}
	e.lazy = false
	var buf [128]byte
	b := append(buf[:0], e.Group...)
	switch e.Kind {
	case EventAppend: // "orders/0 on n1 wrote offsets 10–19 at epoch 2"
		b = append(b, " on "...)
		b = append(b, e.Node...)
		b = append(b, " wrote offsets "...)
		b = strconv.AppendInt(b, e.From, 10)
		b = append(b, "–"...)
		b = strconv.AppendInt(b, e.To-1, 10)
		b = append(b, " at epoch "...)
		b = strconv.AppendUint(b, e.Epoch, 10)
	case EventCommit: // "orders/0 committed offsets 10–19; high-water mark 20"
		b = append(b, " committed offsets "...)
		b = strconv.AppendInt(b, e.From, 10)
		b = append(b, "–"...)
		b = strconv.AppendInt(b, e.To-1, 10)
		b = append(b, "; high-water mark "...)
		b = strconv.AppendInt(b, e.To, 10)
	}
	e.Text = string(b)
}

func (e Event) String() string {
	return fmt.Sprintf("%s %-15s %s", e.Time.Format("15:04:05.000"), e.Kind, e.Text)
}

// Subscription delivers events as they happen. A subscriber that falls
// behind loses events rather than slowing the broker; Dropped counts them.
type Subscription = fanout.Subscription[Event]

// eventBus keeps the last events in a ring and fans them out.
type eventBus struct {
	mu   sync.Mutex
	now  func() time.Time
	seq  uint64
	ring []Event
	head int // next write position once the ring is full
	subs fanout.Set[Event]
}

const eventRingSize = 4096

func newEventBus(now func() time.Time) *eventBus {
	return &eventBus{now: now}
}

func (b *eventBus) emit(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e.Seq = b.seq
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	if b.subs.Len() > 0 {
		e.fillText() // once for every subscriber, and for the ring
	}
	if len(b.ring) < eventRingSize {
		b.ring = append(b.ring, e)
	} else {
		b.ring[b.head] = e
		b.head = (b.head + 1) % eventRingSize
	}
	b.subs.Send(e)
}

// since returns retained events with Seq > seq, oldest first.
func (b *eventBus) since(seq uint64) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Event
	n := len(b.ring)
	for i := 0; i < n; i++ {
		e := &b.ring[(b.head+i)%n]
		if e.Seq > seq {
			e.fillText() // in the ring too: a second reader finds it written
			out = append(out, *e)
		}
	}
	return out
}

func (b *eventBus) subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = 1024
	}
	return b.subs.Subscribe(buffer)
}

func (b *eventBus) closeAll() { b.subs.CloseAll() }
