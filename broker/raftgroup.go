package broker

import (
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/disk"
	"github.com/mqlab/mqlab/broker/partlog"
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
		return &partitionFSM{rep: rep, log: pl}, nil
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
