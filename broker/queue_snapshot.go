package broker

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mqlab/mqlab/broker/queue"
)

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
