package broker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// ConsumerGroupState is one consumer group as its coordinator sees it.
// (GroupState is taken: it is a raft group.)
type ConsumerGroupState struct {
	Group string
	// Coordinator is the node coordinating the group, "" while that moves
	// (the rest is then read from the committed log of CoordinatorPartition).
	Coordinator          string
	CoordinatorPartition TopicPartition
	Generation           int
	// State: "empty", "preparing-rebalance", "completing-rebalance" or
	// "stable".
	State           string
	Strategy        Strategy
	RebalanceReason string // while preparing a rebalance
	Members         []MemberState
	Partitions      []GroupPartitionState
	// Lag is the sum of the partitions' lag in offsets; LagSeconds the
	// largest lag in seconds.
	Lag        int64
	LagSeconds float64
}

// MemberState is one member of a group.
type MemberState struct {
	ID             string
	ClientID       string
	Topics         []string
	Assignment     []TopicPartition // in the member's generation
	Generation     int
	Idle           bool // in the current generation with no partition: more members than partitions
	Joining        bool // not yet in the current generation, or rejoined and waiting for the rebalance to complete
	SessionTimeout time.Duration
	SinceHeartbeat time.Duration
}

// GroupPartitionState is a group's progress on one partition.
type GroupPartitionState struct {
	TopicPartition
	Owner         string // client id of the member that owns it in the current generation, "" for none
	Committed     int64  // the group's committed offset (next to read), -1 for none
	CommittedBy   string // who committed it ("seek" for an admin seek)
	LogStart      int64
	HighWatermark int64
	// Lag is the offsets between the committed offset (or the log start
	// when there is none, or it was deleted) and the high-water mark, as
	// Kafka's tools count it: on a compacted topic it includes offsets a
	// pass emptied, so it can exceed the records left to read.
	// LagSeconds is the age of the oldest record left, 0 when caught up.
	Lag        int64
	LagSeconds float64
}

// consumerGroupStates describes every group for a snapshot, using the
// snapshot's partitions for high-water marks.
func (c *Cluster) consumerGroupStates(s Snapshot) []ConsumerGroupState {
	active := c.groups.active()
	var out []ConsumerGroupState
	for p := 0; p < c.groups.partitions; p++ {
		node := ""
		var groups []groupcoord.Group
		if co := active[p]; co != nil {
			node, groups = co.rep.node, co.describeAll()
		} else {
			groups = c.groupsFromLog(p)
		}
		for _, g := range groups {
			out = append(out, c.groupView(g, node, p, s))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// groupsFromLog rebuilds a read-only view of a coordinator's groups from
// the live replica of __consumer_offsets/p with the most committed records,
// for when no coordinator serves (an election is under way).
func (c *Cluster) groupsFromLog(p int) []groupcoord.Group {
	group := TopicPartition{OffsetsTopic, p}.String()
	var best *replica
	var bestHWM int64 = -1
	for _, id := range c.nodeIDs {
		rep := c.replicaOn(id, group)
		if rep == nil || rep.partition() == nil {
			continue
		}
		if _, hwm, _ := rep.partition().state(); hwm > bestHWM {
			best, bestHWM = rep, hwm
		}
	}
	if best == nil {
		return nil
	}
	co := newCoordinator(c, best, p, 0)
	co.load()
	return co.describeAll()
}

// groupView turns a plain group into its display form.
func (c *Cluster) groupView(g groupcoord.Group, node string, p int, s Snapshot) ConsumerGroupState {
	gs := ConsumerGroupState{Group: g.ID, Coordinator: node, CoordinatorPartition: TopicPartition{OffsetsTopic, p},
		Generation: g.Generation, State: string(g.State), Strategy: g.Strategy, RebalanceReason: g.RebalanceReason}
	owners := map[TopicPartition]string{}
	topics := map[string]bool{}
	for _, m := range g.Members {
		ms := MemberState{ID: m.ID, ClientID: m.ClientID, Topics: m.Topics, Assignment: fromGCs(m.Assignment), Generation: m.Generation,
			SessionTimeout: m.SessionTimeout, SinceHeartbeat: c.sessions.Now().Sub(m.LastHeartbeat)}
		current := m.Generation == g.Generation && g.Generation > 0
		ms.Joining = !current || m.Joined
		ms.Idle = current && len(m.Assignment) == 0
		if current {
			for _, tp := range m.Assignment {
				owners[fromGC(tp)] = m.ClientID
			}
		}
		for _, t := range m.Topics {
			topics[t] = true
		}
		gs.Members = append(gs.Members, ms)
	}
	for _, t := range g.Topics {
		topics[t] = true // read by members that have left
	}
	tps := map[TopicPartition]bool{}
	for t := range topics {
		for i := range c.partitionCount(t) {
			tps[TopicPartition{t, i}] = true
		}
	}
	for tp := range g.Offsets {
		tps[fromGC(tp)] = true
	}
	now := c.now()
	for tp := range tps {
		ps := GroupPartitionState{TopicPartition: tp, Owner: owners[tp], Committed: -1}
		if o, ok := g.Offsets[toGC(tp)]; ok {
			ps.Committed, ps.CommittedBy = o.Offset, o.Member
			if o.Generation < 0 {
				ps.CommittedBy = "seek"
			}
		}
		ps.LogStart, ps.HighWatermark = partitionBounds(s, tp)
		from := max(ps.Committed, ps.LogStart)
		if ps.HighWatermark > from {
			ps.Lag = ps.HighWatermark - from
			if ts, ok := c.recordTime(tp, from); ok {
				ps.LagSeconds = max(0, now.Sub(ts).Seconds())
			}
		}
		gs.Lag += ps.Lag
		gs.LagSeconds = max(gs.LagSeconds, ps.LagSeconds)
		gs.Partitions = append(gs.Partitions, ps)
	}
	sort.Slice(gs.Partitions, func(i, j int) bool {
		return groupLess(gs.Partitions[i].TopicPartition.String(), gs.Partitions[j].TopicPartition.String())
	})
	return gs
}

// partitionBounds reads a partition's log start and high-water mark from a
// snapshot: the leader's, or the highest among live replicas.
func partitionBounds(s Snapshot, tp TopicPartition) (start, hwm int64) {
	for _, t := range s.Topics {
		if t.Config.Name != tp.Topic || tp.Partition >= len(t.Partitions) {
			continue
		}
		ps := t.Partitions[tp.Partition]
		for _, r := range ps.Replicas {
			if !r.Up {
				continue
			}
			if r.Node == ps.Leader {
				return r.LogStart, r.HighWatermark
			}
			if r.HighWatermark > hwm {
				start, hwm = r.LogStart, r.HighWatermark
			}
		}
	}
	return start, hwm
}

// recordTime is the timestamp of the record at offset, read from a live
// replica that has it.
func (c *Cluster) recordTime(tp TopicPartition, offset int64) (time.Time, bool) {
	reps := []*replica{c.leaderOf(tp.String())}
	for _, id := range c.nodeIDs {
		reps = append(reps, c.replicaOn(id, tp.String()))
	}
	for _, rep := range reps {
		if rep == nil || rep.partition() == nil {
			continue
		}
		f := rep.partition()
		f.mu.RLock()
		recs, err := f.log.Read(offset, 1)
		f.mu.RUnlock()
		if err == nil && len(recs) == 1 {
			return time.Unix(0, recs[0].Timestamp), true
		}
	}
	return time.Time{}, false
}

// groupNames lists the groups the serving coordinators know.
func (c *Cluster) groupNames() []string {
	var out []string
	for _, co := range c.groups.active() {
		co.mu.Lock()
		out = append(out, co.state.Groups()...)
		co.mu.Unlock()
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"(none yet)"}
	}
	return out
}

// DescribeGroup returns one group: members, generation, assignment,
// committed offsets and lag.
func (c *Cluster) DescribeGroup(ctx context.Context, group string) (ConsumerGroupState, error) {
	if err := groupcoord.ValidateGroupName(group); err != nil {
		return ConsumerGroupState{}, fmt.Errorf("describe group: %w", gcErr(err))
	}
	if err := c.checkOpen(); err != nil {
		return ConsumerGroupState{}, err
	}
	var names []string
	for _, g := range c.SnapshotWindow(0).Groups {
		if g.Group == group {
			return g, nil
		}
		names = append(names, g.Group)
	}
	if len(names) == 0 {
		names = []string{"(none yet)"}
	}
	return ConsumerGroupState{}, fmt.Errorf("describe group: %w: %q; the groups are %s", ErrUnknownGroup, group, strings.Join(names, ", "))
}

// SeekTarget is where SeekGroup moves a group: an offset, the log start,
// the high-water mark, or the first record at or after a time.
type SeekTarget struct {
	kind   string
	offset int64
	time   time.Time
}

// The seek targets.
var (
	SeekEarliest = SeekTarget{kind: "earliest"}
	SeekLatest   = SeekTarget{kind: "latest"}
)

// SeekOffset targets an offset.
func SeekOffset(offset int64) SeekTarget { return SeekTarget{kind: "offset", offset: offset} }

// SeekTime targets the first record with a timestamp at or after t.
func SeekTime(t time.Time) SeekTarget { return SeekTarget{kind: "time", time: t} }

func (t SeekTarget) String() string {
	switch t.kind {
	case "offset":
		return fmt.Sprintf("offset %d", t.offset)
	case "time":
		return "time " + t.time.Format(time.RFC3339Nano)
	case "":
		return "nowhere"
	}
	return t.kind
}

// SeekGroup moves a group's committed offset on one partition (the lab's
// seek command): the coordinator stores it like a commit, and the member
// that owns the partition, if any, moves its position there with its next
// heartbeat. It returns the offset. An offset must lie in the retained
// log, from the log start up to the high-water mark.
func (c *Cluster) SeekGroup(ctx context.Context, group string, tp TopicPartition, to SeekTarget) (int64, error) {
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("seek %s %s to %s: %w", group, tp, to, err) }
	if err := groupcoord.ValidateGroupName(group); err != nil {
		return fail(gcErr(err))
	}
	if IsInternalTopic(tp.Topic) {
		return fail(fmt.Errorf("%w: %s is internal", ErrInvalid, tp.Topic))
	}
	if _, err := c.topicPartition(tp); err != nil {
		return fail(err)
	}
	const client = "admin"
	start, hwm, err := c.Offsets(ctx, client, tp)
	if err != nil {
		return fail(err)
	}
	var offset int64
	switch to.kind {
	case "offset":
		offset = to.offset
		switch {
		case offset < 0:
			return fail(fmt.Errorf("%w: offsets cannot be negative", ErrInvalid))
		case offset > hwm:
			return fail(fmt.Errorf("%w: beyond the log end; the log holds %d–%d and the next record will be %d", ErrOffsetOutOfRange, start, hwm-1, hwm))
		case offset < start:
			return fail(fmt.Errorf("%w: below the log start %d; retention deleted it", ErrOffsetOutOfRange, start))
		}
	case "earliest":
		offset = start
	case "latest":
		offset = hwm
	case "time":
		if offset, _, err = c.OffsetForTime(ctx, client, tp, to.time); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("%w: no seek target; use SeekOffset, SeekEarliest, SeekLatest or SeekTime", ErrInvalid))
	}
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	err = c.coordinatorCall(ctx, client, group, raftnet.RequestMetadata, nil, func(co *coordinator) error {
		_, err := co.adminSeek(group, tp, offset, to.String())
		return err
	})
	if err != nil {
		return fail(err)
	}
	return offset, nil
}
