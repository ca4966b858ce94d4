package broker

// Finding the live leader of a raft group, where every request goes,
// waiting for one, and moving leadership to another replica.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/raftnet"
)

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
