package lab

// The consumer groups' values and what the checker reads of them: lag,
// delivered, processed, workers and state, every delivery, and the
// consumer clients as the screens show them.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// groupState reads a group from the broker, or says which groups there are.
func (g *groupSet) groupState(name string) (broker.ConsumerGroupState, error) {
	var names []string
	for _, gs := range g.w.cluster.SnapshotWindow(0).Groups {
		if gs.Group == name {
			return gs, nil
		}
		names = append(names, gs.Group)
	}
	if len(names) == 0 {
		return broker.ConsumerGroupState{}, fmt.Errorf("%w %q: there are no groups yet; consumer start NAME group=%s topic=TOPIC makes one", broker.ErrUnknownGroup, name, name)
	}
	return broker.ConsumerGroupState{}, fmt.Errorf("%w %q; the groups are %s%s", broker.ErrUnknownGroup, name, strings.Join(names, ", "), didYouMean(name, names))
}

func (groupsFeature) value(ctx context.Context, w *world, v command.Value) (any, bool, error) {
	g := w.groups
	switch v.Func {
	case "lag", "lag_seconds":
		if v.Target.IsPartition {
			if _, err := w.partition(v.Target.Name, v.Target.Partition); err != nil {
				return nil, true, fmt.Errorf("%s: %w", v, err)
			}
		}
		gs, err := g.groupState(v.Arg)
		if err != nil {
			// Not yet: a consumer may be about to join it.
			return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
		}
		if v.Target.IsPartition {
			return partitionLag(v, gs)
		}
		if v.Func == "lag" {
			return float64(gs.Lag), true, nil
		}
		return gs.LagSeconds, true, nil
	case "idle":
		gs, err := g.groupState(v.Arg)
		if err != nil {
			return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
		}
		return float64(idleMembers(gs)), true, nil
	case "owned":
		gs, err := g.groupState(v.Arg)
		if err != nil {
			return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
		}
		return float64(ownedPartitions(gs)), true, nil
	case "delivered", "processed", "workers":
		n, processed, workers, known := g.counts(v.Arg)
		switch v.Func {
		case "processed":
			n = processed
		case "workers":
			n = workers
		}
		if !known {
			if w.isQueue(v.Arg) {
				return queues.value(ctx, w, v)
			}
			if n, ok := w.clientProcessed(v.Arg); ok && v.Func == "processed" {
				return float64(n), true, nil
			}
			if _, err := g.groupState(v.Arg); err != nil {
				return nil, true, notNow(fmt.Errorf("%s: %w", v, err))
			}
		}
		return float64(n), true, nil
	case "state":
		if cc := g.get(v.Arg); cc != nil {
			return cc.stateNow(), true, nil
		}
	}
	return nil, false, nil
}

// partitionLag reads lag(GROUP, TOPIC/N): one partition's share of the
// group's lag.
func partitionLag(v command.Value, gs broker.ConsumerGroupState) (any, bool, error) {
	var reads []string
	for _, ps := range gs.Partitions {
		if ps.Topic == v.Target.Name && ps.Partition == v.Target.Partition {
			if v.Func == "lag" {
				return float64(ps.Lag), true, nil
			}
			return ps.LagSeconds, true, nil
		}
		reads = append(reads, ps.TopicPartition.String())
	}
	// Not yet: a member reading that topic may be about to join.
	return nil, true, notNow(fmt.Errorf("%s: group %s does not read %s; it reads %s", v, gs.Group, v.Target, orNothing(reads)))
}

func orNothing(list []string) string {
	if len(list) == 0 {
		return "nothing yet"
	}
	return strings.Join(list, ", ")
}

// observe hands the checker every delivery, the finished work and the
// moves to retry topics.
func (groupsFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	g := w.groups
	for _, d := range g.deliveryCopy() {
		h.Deliveries = append(h.Deliveries, checker.Delivery{MsgID: d.MsgID, Client: d.Client, Group: d.Group, Topic: d.Topic, Key: d.Key, Replay: d.Replay})
	}
	h.Done = append(h.Done, g.doneCopy()...)
	g.mu.Lock()
	h.Moves = append(h.Moves, g.moves...)
	g.mu.Unlock()
	return nil
}

func (g *groupSet) deliveryCopy() []Delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.deliveries)
}

// Deliveries returns a copy of every delivery to a consumer so far in this
// cluster, in order.
func (l *Lab) Deliveries() []Delivery {
	w, err := l.world()
	if err != nil {
		return nil
	}
	return w.groups.deliveryCopy()
}

// states copies the consumer clients for a snapshot, by name.
func (g *groupSet) states() []ConsumerState {
	var out []ConsumerState
	for _, name := range g.names() {
		cc := g.get(name)
		cc.mu.Lock()
		cs := ConsumerState{Name: name, Group: cc.cmd.Group, Topic: cc.cmd.Topic, State: cc.state, Started: cc.cmd.String(),
			Service: cc.cmd.Options.Service, Waiting: cc.waiting, Delivered: cc.stats.delivered, Processed: cc.processedN,
			Failures: cc.failures, GivenUp: cc.stats.givenUp, Commits: cc.stats.commits, CommitErrors: cc.stats.commitErrors,
			LastError: cc.lastErr, Crash: cc.crash}
		ru := cc.run
		cc.mu.Unlock()
		if ru != nil && cs.State == ClientUp {
			cs.Member, cs.Generation = ru.cn.MemberID(), ru.cn.Generation()
			for _, tp := range ru.cn.Assignment() {
				cs.Assignment = append(cs.Assignment, tp.String())
			}
		}
		out = append(out, cs)
	}
	return out
}

// idleMembers counts a group's members in the current generation that own
// no partition: a group gives each partition to one member, so members
// beyond the partition count wait.
func idleMembers(gs broker.ConsumerGroupState) int {
	n := 0
	for _, m := range gs.Members {
		if m.Idle {
			n++
		}
	}
	return n
}

// ownedPartitions counts the partitions of a group's topics that a member
// owns in the current generation. A rebalance that deals out fewer than
// all of them leaves records unread while every member looks busy.
func ownedPartitions(gs broker.ConsumerGroupState) int {
	n := 0
	for _, ps := range gs.Partitions {
		if ps.Owner != "" {
			n++
		}
	}
	return n
}

// clientProcessed reads processed(CLIENT): the work one consumer or
// worker finished, so a lesson can see that each of a queue's workers
// did its share. ok is false when no consumer or worker has that name.
func (w *world) clientProcessed(name string) (n int, ok bool) {
	var c *clientCore
	if cc := w.groups.get(name); cc != nil {
		c = cc.core()
	} else if wk := w.queues.get(name); wk != nil {
		c = wk.core()
	} else {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.processedN, true
}
