package broker

import (
	"fmt"
	"strings"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
)

// Every raft group is named: "controller", a partition "orders/0". The
// name says which state machine a replica runs.

// newFSM builds the state machine for rep's group and the log store raft
// should use for it.
func (c *Cluster) newFSM(rep *replica) (raft.FSM, raft.LogStore, error) {
	switch {
	case rep.group == controllerGroup:
		rep.cfsm = newControllerFSM()
		return rep.cfsm, rep.disk.logs, nil
	case strings.Contains(rep.group, "/"):
		cfg, err := c.partlogConfig(rep.group)
		if err != nil {
			return nil, nil, err
		}
		pl, err := partlog.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		rep.pfsm = &partitionFSM{rep: rep, log: pl}
		return rep.pfsm, &hookedLogStore{InmemStore: rep.disk.logs, hooks: rep}, nil
	case c.isQueueGroup(rep.group):
		return c.newQueueFSM(rep)
	}
	return nil, nil, fmt.Errorf("%w: no raft group kind is named like %q", ErrInvalid, rep.group)
}

// groupsOnLocked lists the raft groups with a replica on node, the
// controller first. c.mu must be held.
func (c *Cluster) groupsOnLocked(nodeID string) []string {
	groups := []string{controllerGroup}
	for _, t := range c.topicsLocked() {
		for p, nodes := range t.Placement {
			for _, n := range nodes {
				if n == nodeID {
					groups = append(groups, TopicPartition{t.Config.Name, p}.String())
				}
			}
		}
	}
	groups = append(groups, c.queueGroupsOnLocked(nodeID)...)
	return groups
}
