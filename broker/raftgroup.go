package broker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/disk"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// A raft group replicates one of three kinds of state: the controller's
// metadata, one partition's log, or one work queue. Its kind is known
// where the group is made (the cluster, a topic, a queue) and travels with
// its name, so no replica has to guess it from how the group is named.

// groupKind is what a raft group replicates.
type groupKind int

const (
	kindController groupKind = iota
	kindPartition
	kindQueue
)

// raftGroup is one raft group: its name ("controller", "orders/0",
// "receipts") and its kind.
type raftGroup struct {
	name string
	kind groupKind
}

// stateMachine is what a replica's raft applies entries to: a partition's
// log, a queue, or the controller's metadata.
type stateMachine interface {
	raft.FSM
	// logStore is the raft log store the replica keeps on its disk.
	logStore(d *disk.Disk) raft.LogStore
}

func (f *controllerFSM) logStore(d *disk.Disk) raft.LogStore { return d.Logs }
func (f *queueFSM) logStore(d *disk.Disk) raft.LogStore      { return d.Logs }

// logStore wraps the disk's log so that the replica hears of each entry
// the leader stores (acks=1 answers once its own log has it).
func (f *partitionFSM) logStore(d *disk.Disk) raft.LogStore {
	return &disk.HookedLogStore{InmemStore: d.Logs, Hooks: f.rep}
}

// newStateMachine builds the state machine of rep's group, by its kind.
func (c *Cluster) newStateMachine(rep *replica) (stateMachine, error) {
	switch rep.kind {
	case kindController:
		return newControllerFSM(), nil
	case kindPartition:
		cfg, err := c.partlogConfig(rep.group)
		if err != nil {
			return nil, err
		}
		pl, err := partlog.New(cfg)
		if err != nil {
			return nil, err
		}
		f := &partitionFSM{rep: rep, log: pl}
		f.openFiles(cfg)
		return f, nil
	case kindQueue:
		return c.newQueueFSM(rep)
	}
	return nil, fmt.Errorf("%w: raft group %q has no kind", ErrInvalid, rep.group)
}

// partition is the replica's partition state machine, or nil for another
// kind of group.
func (rep *replica) partition() *partitionFSM { f, _ := rep.sm.(*partitionFSM); return f }

// queue is the replica's queue state machine, or nil.
func (rep *replica) queue() *queueFSM { f, _ := rep.sm.(*queueFSM); return f }

// controller is the replica's controller state machine, or nil.
func (rep *replica) controller() *controllerFSM { f, _ := rep.sm.(*controllerFSM); return f }

// groupsOnLocked lists the raft groups with a replica on node, the
// controller first. c.mu must be held.
func (c *Cluster) groupsOnLocked(nodeID string) []raftGroup {
	groups := []raftGroup{{controllerGroup, kindController}}
	for _, t := range c.topicsLocked() {
		for p, nodes := range t.Placement {
			for _, n := range nodes {
				if n == nodeID {
					groups = append(groups, raftGroup{TopicPartition{t.Config.Name, p}.String(), kindPartition})
				}
			}
		}
	}
	for _, q := range c.queueGroupsOnLocked(nodeID) {
		groups = append(groups, raftGroup{q, kindQueue})
	}
	return groups
}

// Finding the live leader of a raft group, where every request goes,
// waiting for one, and moving leadership to another replica.

// replicaOn returns the live replica of group on a node, or nil.
func (c *Cluster) replicaOn(nodeID, group string) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[nodeID]
	if n == nil || !n.up {
		return nil
	}
	return n.replicas[group]
}

// leaderOf returns the live replica that leads group at the highest term.
// An isolated old leader may still believe it leads; the newer term wins.
func (c *Cluster) leaderOf(group string) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *replica
	var bestTerm uint64
	for _, id := range c.nodeIDs {
		n := c.nodes[id]
		if !n.up {
			continue
		}
		rep := n.replicas[group]
		if rep == nil || !rep.isLeader() {
			continue
		}
		if t := rep.raft().CurrentTerm(); best == nil || t > bestTerm {
			best, bestTerm = rep, t
		}
	}
	return best
}

// poll checks cond every few milliseconds until it holds or ctx ends.
func poll(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// waitReadyLeader waits until group has a leader that passed its barrier.
func (c *Cluster) waitReadyLeader(ctx context.Context, group string) (*replica, error) {
	var lead *replica
	err := poll(ctx, func() bool {
		lead = c.leaderOf(group)
		return lead != nil && lead.readyLeader()
	})
	if err != nil {
		return nil, fmt.Errorf("%w for %s: %v", ErrNoLeader, group, err)
	}
	return lead, nil
}

// WaitForLeader waits until the partition has a leader ready to serve and
// returns its node.
func (c *Cluster) WaitForLeader(ctx context.Context, tp TopicPartition) (string, error) {
	if _, err := c.topicPartition(tp); err != nil {
		return "", err
	}
	lead, err := c.waitReadyLeader(ctx, tp.String())
	if err != nil {
		return "", err
	}
	return lead.node, nil
}

// Leader returns the node leading the partition now and serving reads (past
// its barrier), or "" if none.
func (c *Cluster) Leader(tp TopicPartition) string {
	if lead := c.leaderOf(tp.String()); lead != nil && lead.readyLeader() {
		return lead.node
	}
	return ""
}

// TransferLeadership moves the partition's leadership to node and waits
// until that node leads and is ready to serve.
func (c *Cluster) TransferLeadership(ctx context.Context, tp TopicPartition, nodeID string) error {
	rec, err := c.topicPartition(tp)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	if _, err := c.node(nodeID); err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	hosts := rec.Placement[tp.Partition]
	found := false
	for _, h := range hosts {
		found = found || h == nodeID
	}
	if !found {
		return fmt.Errorf("%w: elect %s %s: %s holds no replica of it; its replicas are on %s", ErrInvalid, nodeID, tp, nodeID, strings.Join(hosts, ", "))
	}
	if c.replicaOn(nodeID, tp.String()) == nil {
		return fmt.Errorf("elect %s %s: %w", nodeID, tp, ErrNodeDown)
	}
	return c.elect(ctx, tp.String(), nodeID, false)
}

// elect waits for a leader and, if it is not nodeID, asks it to hand over,
// retrying because a successful transfer only means the old leader stepped
// down, not that the target won. bestEffort gives up quietly once the
// group has some leader.
func (c *Cluster) elect(ctx context.Context, group, nodeID string, bestEffort bool) error {
	round := time.Duration(10) * c.timing.ElectionTimeout
	for attempt := 0; ; attempt++ {
		lead, err := c.waitReadyLeader(ctx, group)
		if err != nil {
			return err
		}
		if lead.node == nodeID {
			return nil
		}
		if bestEffort && (attempt >= 3 || c.replicaOn(nodeID, group) == nil) {
			return nil
		}
		c.events.emit(Event{Kind: EventLeaderTransfer, Node: lead.node, Group: group,
			Text: fmt.Sprintf("%s hands leadership of %s to %s", lead.node, group, nodeID)})
		f := lead.raft().LeadershipTransferToServer(raft.ServerID(nodeID), raftnet.Addr(nodeID, group))
		lead.wait(f) // success only means the old leader stepped down; check who won below
		wctx, cancel := context.WithTimeout(ctx, round)
		_ = poll(wctx, func() bool {
			l := c.leaderOf(group)
			return l != nil && l.readyLeader() && l.node == nodeID
		})
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("elect %s for %s: %w", nodeID, group, ctx.Err())
		}
	}
}
