package lab

// The queues' values and what the checker reads of them: a queue as the
// cluster holds it (depth, inflight, leader, epoch), delivered, processed
// and state, each message's fate, and the workers as the screens show
// them.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
)

// --- queues as the cluster holds them

// queueState returns a queue's state, or an error naming the queues there are.
func (w *world) queueState(name string) (broker.QueueState, error) {
	var names []string
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			return q, nil
		}
		names = append(names, q.Config.Name)
	}
	if _, err := w.topic(name); err == nil {
		return broker.QueueState{}, fmt.Errorf("%w %q: %s is a topic, not a queue", broker.ErrUnknownQueue, name, name)
	}
	if len(names) == 0 {
		return broker.QueueState{}, fmt.Errorf("%w %q: there are no queues yet; create one with queue create %s", broker.ErrUnknownQueue, name, name)
	}
	return broker.QueueState{}, fmt.Errorf("%w %q; the queues are %s%s", broker.ErrUnknownQueue, name, strings.Join(names, ", "), didYouMean(name, names))
}

func (w *world) isQueue(name string) bool {
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			return true
		}
	}
	return false
}

// queueValue reads leader(Q) or epoch(Q).
func (w *world) queueValue(v command.Value) (any, error) {
	q, err := w.queueState(v.Target.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	switch v.Func {
	case "leader":
		return orNone(q.Leader), nil
	case "epoch":
		if v.Node != "" {
			for _, r := range q.Replicas {
				if r.Node == v.Node {
					if !r.Up {
						return nil, notNow(fmt.Errorf("%s: %s is down", v, v.Node))
					}
					return float64(r.Epoch), nil
				}
			}
			return nil, fmt.Errorf("%s: %s holds no replica of %s", v, v.Node, q.Config.Name)
		}
		if q.Epoch == 0 {
			return nil, notNow(fmt.Errorf("%s: no replica of %s is up", v, q.Config.Name))
		}
		return float64(q.Epoch), nil
	}
	return nil, fmt.Errorf("%s: %s is a queue; %s is read from a partition (depth, inflight and oldest_age are a queue's)", v, q.Config.Name, v.Func)
}

// resolveQueue resolves leader(Q) and follower(Q).
func (w *world) resolveQueue(ref command.NodeRef) (string, error) {
	q, err := w.queueState(ref.Of.Name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	return leaderOrFollower(ref, q.Leader, q.Replicas, func(r broker.QueueReplicaState) (string, bool) { return r.Node, r.Up })
}

// --- values and the checker

func (queuesFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	qs := w.queues
	switch v.Func {
	case "depth", "inflight", "oldest_age":
		q, err := w.queueState(v.Arg)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", v, err)
		}
		switch v.Func {
		case "depth":
			return float64(q.Counts.Depth()), true, nil
		case "inflight":
			return float64(q.Counts.InFlight), true, nil
		}
		return q.OldestAge.Seconds(), true, nil
	case "stale_acks":
		if !w.isQueue(v.Arg) {
			return nil, true, fmt.Errorf("%s: %q is not a queue; stale_acks counts a queue's refused acks", v, v.Arg)
		}
		qs.mu.Lock()
		defer qs.mu.Unlock()
		return float64(qs.staleAcks[v.Arg]), true, nil
	case "renewals":
		if !w.isQueue(v.Arg) {
			return nil, true, fmt.Errorf("%s: %q is not a queue; renewals counts the visibility deadlines its consumers moved", v, v.Arg)
		}
		qs.l.syncBroker(w) // the renewals the broker reported so far
		qs.mu.Lock()
		defer qs.mu.Unlock()
		return float64(qs.renewals[v.Arg]), true, nil
	case "delivered", "processed", "workers":
		if !w.isQueue(v.Arg) {
			return nil, false, nil
		}
		delivered, processed, workers, _ := qs.counts(v.Arg)
		switch v.Func {
		case "processed":
			return float64(processed), true, nil
		case "workers":
			return float64(workers), true, nil
		}
		return float64(delivered + w.sqsWire.deliveredFrom(v.Arg)), true, nil
	case "state":
		if wk := qs.get(v.Arg); wk != nil {
			return wk.stateNow(), true, nil
		}
	}
	return nil, false, nil
}

// note takes what the checker needs from the broker's events: which
// messages were acked or expired; and the renewals of each queue. Called
// with the timeline lock held.
func (qs *queueSet) note(e broker.Event) {
	if qs == nil {
		return
	}
	if e.Kind == broker.EventQueueVisibility {
		// The lab's workers with extend= and SQS clients alike: the
		// broker reports each accepted renewal once.
		qs.mu.Lock()
		qs.renewals[e.Group]++
		qs.mu.Unlock()
		return
	}
	if e.MsgID == "" {
		return
	}
	switch e.Kind {
	case broker.EventQueueAck:
		qs.mu.Lock()
		qs.acked[e.MsgID] = true
		qs.mu.Unlock()
	case broker.EventQueueExpire:
		qs.mu.Lock()
		qs.expired[e.MsgID] = true
		qs.mu.Unlock()
	case broker.EventQueueDrop:
		qs.mu.Lock()
		qs.dropped[e.MsgID] = true
		qs.mu.Unlock()
	}
}

// observe hands the checker every send, every delivery, and each queue
// message's fate.
func (queuesFeature) observe(ctx context.Context, w *world, h *checker.History, o *checker.Observed) error {
	qs := w.queues
	// In this order, so that a message cannot slip between the reads:
	// the sends the clients heard answered, then each queue's contents,
	// then the acks, expiries and drops reported so far. A send heard
	// before the queue was read is in the queue or has left it, and
	// leaving it is reported by the time the last read is made.
	qs.l.syncBroker(w)
	qs.mu.Lock()
	for _, s := range qs.sends {
		h.Sends = append(h.Sends, checker.Send{MsgID: s.MsgID, Client: s.Client, Queue: s.Queue, Outcome: s.Outcome})
	}
	for _, d := range qs.deliveries {
		h.Deliveries = append(h.Deliveries, checker.Delivery{MsgID: d.MsgID, Client: d.Client, Group: d.Queue, Key: d.Key, Replay: d.Replay})
	}
	h.Done = append(h.Done, qs.doneWork...)
	qs.mu.Unlock()
	if o.Fates == nil {
		o.Fates = map[string]checker.Fate{}
	}
	var problems []string
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		msgs, err := w.readQueue(ctx, q.Config.Name)
		if err != nil {
			o.Unreadable = append(o.Unreadable, q.Config.Name)
			problems = append(problems, fmt.Sprintf("%s (%v)", q.Config.Name, err))
			continue
		}
		dlq := len(q.DeadLetterFor) > 0
		for _, m := range msgs {
			var f checker.Fate
			switch {
			case dlq:
				f = checker.FateDeadLettered
			case m.State == "in-flight":
				f = checker.FateInFlight
			case m.State == "delayed":
				f = checker.FateDelayed
			case m.State == "moving" && w.isDLQ(m.MoveTo):
				f = checker.FateDeadLettered
			default:
				f = checker.FateReady
			}
			o.Fates[m.MsgID] = f
		}
	}
	qs.l.syncBroker(w) // the acks, expiries and drops reported since
	qs.mu.Lock()
	for id := range qs.expired {
		o.Fates[id] = checker.FateExpired
	}
	for id := range qs.dropped {
		o.Fates[id] = checker.FateDropped
	}
	for id := range qs.acked {
		o.Fates[id] = checker.FateAcked
	}
	qs.mu.Unlock()
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func (w *world) isDLQ(name string) bool {
	q, err := w.queueState(name)
	return err == nil && len(q.DeadLetterFor) > 0
}

// readQueue waits for the queue's leader and lists its messages, retrying
// until ctx ends.
func (w *world) readQueue(ctx context.Context, name string) ([]broker.QueueMessageState, error) {
	if _, err := w.cluster.WaitForQueueLeader(ctx, name); err != nil {
		return nil, err
	}
	var last error
	for {
		msgs, err := w.cluster.QueueMessages(ctx, name)
		if err == nil {
			return msgs, nil
		}
		if errors.Is(err, broker.ErrUnknownQueue) || errors.Is(err, broker.ErrClosed) {
			return nil, err
		}
		last = err
		if clock.SleepWall(ctx, 20*time.Millisecond) != nil {
			return nil, fmt.Errorf("gave up after %v: %w", DrainTimeout, last)
		}
	}
}

// QueueSends returns a copy of every send to a queue so far in this
// cluster, in order.
func (l *Lab) QueueSends() []QueueSend {
	w, err := l.world()
	if err != nil {
		return nil
	}
	w.queues.mu.Lock()
	defer w.queues.mu.Unlock()
	out := make([]QueueSend, len(w.queues.sends))
	for i, s := range w.queues.sends {
		out[i] = *s
	}
	return out
}

// QueueDeliveries returns a copy of every delivery to a worker so far in
// this cluster, in order.
func (l *Lab) QueueDeliveries() []QueueDelivery {
	w, err := l.world()
	if err != nil {
		return nil
	}
	w.queues.mu.Lock()
	defer w.queues.mu.Unlock()
	return slices.Clone(w.queues.deliveries)
}

// states copies the workers for a snapshot, by name.
func (qs *queueSet) states() []WorkerState {
	var out []WorkerState
	for _, name := range qs.names() {
		wk := qs.get(name)
		wk.mu.Lock()
		out = append(out, WorkerState{Name: name, Queue: wk.cmd.Queue, State: wk.state, Started: wk.cmd.String(),
			Service: wk.cmd.Options.Service, Waiting: wk.waiting, Holding: wk.holding, Received: wk.stats.received, Processed: wk.processedN,
			Failures: wk.failures, Acks: wk.stats.acks, AckErrors: wk.stats.ackErrors, Nacks: wk.stats.nacks,
			DeadLettered: wk.stats.deadLettered, LastError: wk.lastErr, Crash: wk.crash})
		wk.mu.Unlock()
	}
	return out
}
