package lab

import (
	"fmt"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/command"
)

// resolve turns a node reference into a node id, reading the cluster as it
// is now: leader(orders/0) is whoever leads at the highest epoch, and
// follower(orders/0) the first live replica in node order that does not.
func (w *world) resolve(ref command.NodeRef) (string, error) {
	if ref.Kind == command.RefNode {
		if _, err := w.node(ref.Node); err != nil {
			return "", err
		}
		return ref.Node, nil
	}
	if isController(ref.Of) {
		ctl := w.cluster.SnapshotWindow(0)
		var nodes []broker.ReplicaState
		for _, n := range ctl.Nodes {
			nodes = append(nodes, broker.ReplicaState{Node: n.ID, Up: n.Up})
		}
		return leaderOrFollower(ref, ctl.Controller.Leader, nodes, func(r broker.ReplicaState) (string, bool) { return r.Node, r.Up })
	}
	if !ref.Of.IsPartition {
		if _, err := w.topic(ref.Of.Name); err != nil {
			return w.resolveQueue(ref)
		}
		return "", w.queueNotAvailable(ref.Of.Name, ref.String())
	}
	p, err := w.partition(ref.Of.Name, ref.Of.Partition)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	return leaderOrFollower(ref, p.Leader, p.Replicas, func(r broker.ReplicaState) (string, bool) { return r.Node, r.Up })
}

// isController says whether t names the controller, a name the broker
// keeps from topics and queues.
func isController(t command.Target) bool {
	return !t.IsPartition && t.Name == "controller"
}

// leaderOrFollower resolves leader(X) or follower(X) of a partition or a
// queue, by its leader and its replicas; node says which node a replica
// is on and whether it is up.
func leaderOrFollower[R any](ref command.NodeRef, leader string, replicas []R, node func(R) (id string, up bool)) (string, error) {
	if ref.Kind == command.RefLeader {
		if leader == "" {
			return "", fmt.Errorf("%s: %s has no leader right now (an election, or too few replicas up); wait leader(%s) != none first", ref, ref.Of, ref.Of)
		}
		return leader, nil
	}
	var followers []string
	for _, r := range replicas {
		if n, up := node(r); up && n != leader {
			followers = append(followers, n)
		}
	}
	if len(followers) == 0 {
		return "", fmt.Errorf("%s: %s has no live follower right now", ref, ref.Of)
	}
	byNodeOrder(followers)
	return followers[0], nil
}

// resolved writes a reference with what it resolved to: "leader(orders/0) → n1".
func resolved(ref command.NodeRef, id string) string {
	if ref.Kind == command.RefNode {
		return id
	}
	return ref.String() + " → " + id
}

// queueNotAvailable explains why a name that is not a partition cannot be
// used where only partitions are: a topic name without /N gets a hint, an
// unknown name the queues there are.
func (w *world) queueNotAvailable(name, what string) error {
	if t, err := w.topic(name); err == nil {
		return fmt.Errorf("%s: %s is a topic; name one of its %d partitions, e.g. %s/0", what, name, len(t.Partitions), name)
	}
	if _, err := w.queueState(name); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w for a queue", what, ErrNotAvailable)
}

// stateOfNode reads a node's state: up or down.
func stateOfNode(n broker.NodeState) string {
	if n.Up {
		return "up"
	}
	return "down"
}
