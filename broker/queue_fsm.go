package broker

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/queue"
)

// The events of queues. Group is the queue, MsgID the message, Client the
// consumer, From the message's number in the queue.
const (
	EventQueueCreated       EventKind = "queue-created"        // a queue or exchange was created, or a queue bound
	EventQueueDeleted       EventKind = "queue-deleted"        // a queue was deleted with what it held
	EventQueueSend          EventKind = "queue-send"           // a message entered a queue
	EventQueueReject        EventKind = "queue-reject"         // a send refused: the queue is full
	EventQueueDeliver       EventKind = "queue-deliver"        // a message's first delivery
	EventQueueRedeliver     EventKind = "queue-redeliver"      // a delivery of a message received before
	EventQueueAck           EventKind = "queue-ack"            // acked and deleted
	EventQueueNack          EventKind = "queue-nack"           // given back by its consumer
	EventQueueVisibility    EventKind = "queue-visibility"     // a consumer moved a message's deadline
	EventQueueTimeout       EventKind = "queue-timeout"        // a visibility timeout ran out: the message is back
	EventQueueExpire        EventKind = "queue-expire"         // dropped by TTL
	EventQueueDrop          EventKind = "queue-drop"           // dropped from the head of a full queue to make room
	EventQueueDeadLettering EventKind = "queue-dead-lettering" // a message is on its way to the dead-letter queue
	EventQueueDeadLetter    EventKind = "queue-dead-letter"    // the dead-letter queue holds it; its queue dropped it
	EventQueueRedrive       EventKind = "queue-redrive"        // a redrive started, or moved a message back
)

// queueFSM is the raft state machine of one queue replica: a thin adapter
// over queue.Queue, which has the logic and its own tests.
type queueFSM struct {
	rep     *replica
	emitted *atomic.Uint64 // shared by the queue's replicas: the highest index reported

	mu      sync.RWMutex
	q       *queue.Queue
	applied uint64
	changed chan struct{}                // closed after every apply, then replaced: wakes long polls
	waiters map[uint64]chan queue.Result // proposals of this replica waiting for their result, by request id

	line receiveLine // the receives waiting here while it leads, oldest first
}

func (f *queueFSM) Apply(l *raft.Log) interface{} {
	cmd, err := queue.DecodeCommand(l.Data)
	f.mu.Lock()
	var res queue.Result
	if err != nil {
		res.Err = err
	} else {
		res = f.q.Apply(cmd)
	}
	if w, ok := f.waiters[cmd.ReqID]; ok && cmd.ReqID != 0 {
		w <- res // buffered; the proposer may have given up
		delete(f.waiters, cmd.ReqID)
	}
	f.applied = l.Index
	// Events go out before the new state can be read, so whoever sees a
	// count move can find the event that moved it. The first replica to
	// apply an entry reports it, so each change is told once even when
	// the leader that committed it dies before it applies it: the
	// checker learns acks from these events, and an ack nobody told of
	// would read as a message lost.
	if len(res.Changes) > 0 && f.firstToApply(l.Index) {
		f.emit(l.Term, res.Changes)
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	return res
}

// watch returns a channel closed at the next apply, and whether a receive
// by consumer would hand out something now.
func (f *queueFSM) watch(now int64, consumer string, limit int) (<-chan struct{}, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.changed, f.q.CanDeliver(now, consumer, limit)
}

// canDeliver says whether a receive by consumer would hand out something
// now.
func (f *queueFSM) canDeliver(now int64, consumer string, limit int) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.q.CanDeliver(now, consumer, limit)
}

func (f *queueFSM) nextDue() (int64, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.q.NextDue()
}

func (f *queueFSM) outbox() []queue.Outgoing {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.q.Outbox()
}

func (f *queueFSM) counts() (queue.Counts, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.q.Counts(), f.applied
}

func (f *queueFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	data, err := f.q.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("snapshot queue %s: %w", f.rep.group, err)
	}
	return &bytesSnapshot{data: append(binary.AppendUvarint(nil, f.applied), data...)}, nil
}

func (f *queueFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("restore queue %s: %w", f.rep.group, err)
	}
	applied, n := binary.Uvarint(data)
	if n <= 0 {
		return fmt.Errorf("restore queue %s: bad header", f.rep.group)
	}
	q, err := queue.Restore(data[n:])
	if err != nil {
		return fmt.Errorf("restore queue %s: %w", f.rep.group, err)
	}
	f.mu.Lock()
	f.q, f.applied = q, applied
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	return nil
}

// queueApply proposes a command on this replica, which must lead, with
// the leader's clock stamped in, and waits for this replica to apply it.
// Errors wrapping ErrNotLeader mean nothing was written; ErrUnknownOutcome
// means it may have been. A command the queue refuses comes back in the
// result's Err.
//
// It never waits on raft's future: in hashicorp/raft v1.8.0 a future whose
// entry is committed just as its raft instance shuts down is never
// answered (the batch sits in the FSM's channel after the FSM goroutine has
// gone), and a client would hang on a killed node for ever. The state
// machine hands the result over instead, and the wait ends when the
// replica stops, loses leadership, or runs out of time.
func (rep *replica) queueApply(cmd queue.Command) (queue.Result, error) {
	r := rep.raft()
	f := rep.queue()
	if r == nil || f == nil || r.State() != raft.Leader {
		return queue.Result{}, fmt.Errorf("%w: %s on %s", ErrNotLeader, rep.group, rep.node)
	}
	term := r.CurrentTerm()
	cmd.Now = rep.c.now().UnixNano()
	cmd.ReqID = rep.c.reqID.Add(1)
	w := make(chan queue.Result, 1)
	f.mu.Lock()
	if f.waiters == nil {
		f.waiters = map[uint64]chan queue.Result{}
	}
	f.waiters[cmd.ReqID] = w
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.waiters, cmd.ReqID)
		f.mu.Unlock()
	}()
	r.Apply(cmd.Encode(), rep.c.requestTimeout())
	timeout := time.NewTimer(rep.c.requestTimeout())
	defer timeout.Stop()
	check := time.NewTicker(max(time.Millisecond, rep.c.timing.HeartbeatTimeout/10))
	defer check.Stop()
	for {
		select {
		case res := <-w:
			return res, nil
		case <-rep.stop:
			return queue.Result{}, fmt.Errorf("%w: %s on %s shut down", ErrUnknownOutcome, rep.group, rep.node)
		case <-timeout.C:
			return queue.Result{}, fmt.Errorf("%w: %s on %s did not apply it within %v", ErrUnknownOutcome, rep.group, rep.node, rep.c.requestTimeout())
		case <-check.C:
			// Raft refuses or abandons a proposal when its leader steps
			// down or hands over; the entry may still commit under the
			// next leader.
			if r.State() != raft.Leader || r.CurrentTerm() != term {
				return queue.Result{}, fmt.Errorf("%w: %s on %s lost leadership in epoch %d", ErrUnknownOutcome, rep.group, rep.node, term)
			}
		}
	}
}

// firstToApply says whether this replica is the first of its queue's to
// apply the entry at index, and claims it.
func (f *queueFSM) firstToApply(index uint64) bool {
	for {
		cur := f.emitted.Load()
		if index <= cur {
			return false
		}
		if f.emitted.CompareAndSwap(cur, index) {
			return true
		}
	}
}

func clock(ns int64) string { return time.Unix(0, ns).Format("15:04:05.000") }

func msgName(seq uint64, id string) string {
	if id == "" {
		return fmt.Sprintf("m%d", seq)
	}
	return fmt.Sprintf("m%d (%s)", seq, id)
}

// emit reports what an apply did, one event per message. The first
// replica to apply an entry reports it (firstToApply), so each thing is
// told once.
func (f *queueFSM) emit(term uint64, changes []queue.Change) {
	q := f.rep.group
	for _, ch := range changes {
		e := Event{Epoch: term, Client: ch.Consumer, MsgID: ch.MsgID, From: int64(ch.Seq), To: int64(ch.Seq) + 1}
		name := msgName(ch.Seq, ch.MsgID)
		switch ch.Kind {
		case queue.ChSent:
			e.Kind, e.Text = EventQueueSend, fmt.Sprintf("%s: %s sent", q, name)
			if ch.Due != 0 {
				e.Text += ", delayed until " + clock(ch.Due)
			}
		case queue.ChRejected:
			e.Kind, e.Text = EventQueueReject, fmt.Sprintf("%s is full: send of %s rejected", q, ch.MsgID)
			e.From, e.To = 0, 0
		case queue.ChDelivered:
			e.Kind, e.Text = EventQueueDeliver, fmt.Sprintf("%s: %s delivered to %s, invisible until %s", q, name, ch.Consumer, clock(ch.Due))
			if ch.ReceiveCount > 1 {
				e.Kind, e.Text = EventQueueRedeliver, fmt.Sprintf("%s: %s delivered again to %s (receive %d), invisible until %s", q, name, ch.Consumer, ch.ReceiveCount, clock(ch.Due))
			}
		case queue.ChAcked:
			e.Kind, e.Text = EventQueueAck, fmt.Sprintf("%s: %s acked by %s and deleted", q, name, ch.Consumer)
		case queue.ChNacked:
			e.Kind, e.Text = EventQueueNack, fmt.Sprintf("%s: %s gave %s back after receive %d", q, ch.Consumer, name, ch.ReceiveCount)
			if ch.Reason != "" {
				e.Text += ": " + ch.Reason
			}
			if ch.Due != 0 {
				e.Text += "; ready again at " + clock(ch.Due)
			}
		case queue.ChVisibility:
			e.Kind, e.Text = EventQueueVisibility, fmt.Sprintf("%s: %s keeps %s invisible until %s", q, ch.Consumer, name, clock(ch.Due))
		case queue.ChTimedOut:
			e.Kind, e.Text = EventQueueTimeout, fmt.Sprintf("%s: %s's visibility timeout ran out (%s never acked receive %d): back in the queue", q, name, ch.Consumer, ch.ReceiveCount)
		case queue.ChExpired:
			e.Kind, e.Text = EventQueueExpire, fmt.Sprintf("%s: %s expired, %s; it will never be delivered", q, name, ch.Reason)
		case queue.ChDropped:
			e.Kind, e.Text = EventQueueDrop, fmt.Sprintf("%s: %s dropped, %s; it will never be delivered", q, name, ch.Reason)
		case queue.ChDeadLettering:
			e.Kind, e.Text = EventQueueDeadLettering, fmt.Sprintf("%s: %s goes to %s, %s", q, name, ch.Queue, ch.Reason)
		case queue.ChDeadLettered:
			e.Kind, e.Text = EventQueueDeadLetter, fmt.Sprintf("%s: %s is now in dead-letter queue %s after %d receives", q, name, ch.Queue, ch.ReceiveCount)
		case queue.ChRedriven:
			e.Kind, e.Text = EventQueueRedrive, fmt.Sprintf("%s: %s redriven back to %s", q, name, ch.Queue)
		default:
			continue // marking for redrive and arrivals are told by the queue that sends
		}
		f.rep.emit(e)
	}
}

// QueueCounts are a queue's gauges and counters; see queue.Counts for the
// accounting identity they keep.
type QueueCounts = queue.Counts

// QueueState is one queue as Snapshot sees it.
type QueueState struct {
	Config QueueConfig
	Leader string // "" when none
	Epoch  uint64 // the leader's; without one, the highest among live replicas
	// Counts, OldestAge and Messages are read from the leader, or without
	// one from the live replica that has applied the most.
	Counts    QueueCounts
	OldestAge time.Duration // how long the oldest message held has waited
	Messages  []QueueMessageState
	Replicas  []QueueReplicaState
	// DeadLetterFor lists the queues whose dead-letter queue this is;
	// Exchanges the exchanges it is bound to.
	DeadLetterFor []string
	Exchanges     []string
}

// QueueReplicaState is one replica of a queue.
type QueueReplicaState struct {
	Node    string
	Up      bool
	Role    string // "leader", "follower", "candidate" or "down"
	Epoch   uint64
	Applied uint64 // the raft index its state machine has applied
	Counts  QueueCounts
}

// QueueMessageState is one message held by a queue.
type QueueMessageState struct {
	Seq          uint64
	MsgID        string
	State        string // "ready", "in-flight", "delayed" or "moving"
	ReceiveCount int
	Consumer     string    // in flight: who holds it
	Deadline     time.Time // in flight: visible again then; delayed: ready then; else zero
	EnqueuedAt   time.Time
	Body         string
	LastError    string
	Source       string // in a dead-letter queue: where it came from
	MoveTo       string // moving: where to
}

// QueueMessages lists every message a queue holds, oldest first, read from
// its ready leader: what a checker needs to account for each message id
// (Snapshot carries only a window).
func (c *Cluster) QueueMessages(ctx context.Context, name string) ([]QueueMessageState, error) {
	if _, err := c.lookupQueue(name); err != nil {
		return nil, fmt.Errorf("queue messages: %w", err)
	}
	lead, err := c.waitReadyLeader(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("queue messages of %s: %w", name, err)
	}
	f := lead.queue()
	f.mu.RLock()
	defer f.mu.RUnlock()
	return messageStates(f.q.Window(math.MaxInt)), nil
}

func messageStates(msgs []queue.Message) []QueueMessageState {
	var out []QueueMessageState
	for _, m := range msgs {
		ms := QueueMessageState{Seq: m.Seq, MsgID: m.MsgID, State: m.State.String(), ReceiveCount: m.ReceiveCount,
			EnqueuedAt: time.Unix(0, m.EnqueuedAt), Body: string(m.Body), LastError: m.LastError, Source: m.Source, MoveTo: m.MoveTo}
		if m.State == queue.InFlight {
			ms.Consumer = m.Consumer
		}
		if m.Due != 0 {
			ms.Deadline = time.Unix(0, m.Due)
		}
		out = append(out, ms)
	}
	return out
}

// queueStates reads every queue for Snapshot.
func (c *Cluster) queueStates(window int) []QueueState {
	type hosted struct {
		node string
		up   bool
		rep  *replica
	}
	c.mu.Lock()
	recs := c.queuesLocked()
	reps := map[string][]hosted{}
	for _, q := range recs {
		for _, id := range q.Replicas {
			n := c.nodes[id]
			reps[q.Config.Name] = append(reps[q.Config.Name], hosted{id, n.up, n.replicas[q.Config.Name]})
		}
	}
	exchanges := map[string][]string{}
	for ex, bound := range c.queues.exchanges {
		for _, q := range bound {
			exchanges[q] = append(exchanges[q], ex)
		}
	}
	c.mu.Unlock()
	now := c.now().UnixNano()
	var out []QueueState
	for _, rec := range recs {
		name := rec.Config.Name
		qs := QueueState{Config: rec.Config, Exchanges: exchanges[name]}
		slices.Sort(qs.Exchanges)
		for _, other := range recs {
			if other.Config.DLQ == name {
				qs.DeadLetterFor = append(qs.DeadLetterFor, other.Config.Name)
			}
		}
		var live []*replica
		var best *replica
		var bestApplied uint64
		for _, h := range reps[name] {
			if !h.up || h.rep == nil || h.rep.queue() == nil {
				qs.Replicas = append(qs.Replicas, QueueReplicaState{Node: h.node, Role: "down"})
				continue
			}
			live = append(live, h.rep)
			r := h.rep.raft()
			rs := QueueReplicaState{Node: h.node, Up: true, Epoch: r.CurrentTerm(), Role: roleOf(r)}
			rs.Counts, rs.Applied = h.rep.queue().counts()
			if best == nil || rs.Applied > bestApplied {
				best, bestApplied = h.rep, rs.Applied
			}
			qs.Replicas = append(qs.Replicas, rs)
		}
		gs := groupState(live)
		qs.Leader, qs.Epoch = gs.Leader, gs.Epoch
		for _, r := range live {
			if r.node == qs.Leader {
				best = r
			}
		}
		if best != nil {
			f := best.queue()
			f.mu.RLock()
			qs.Counts = f.q.Counts()
			qs.OldestAge = f.q.OldestAge(now)
			qs.Messages = messageStates(f.q.Window(window))
			f.mu.RUnlock()
		}
		out = append(out, qs)
	}
	return out
}
