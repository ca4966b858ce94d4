package broker

// Requests from clients outside the lab, such as Kafka clients speaking the
// wire protocol (package kafkawire). Unlike the lab's own clients, which
// follow leaders themselves, an outside client addresses one node, as a
// Kafka client addresses one broker: the node answers for what it leads and
// refuses the rest with ErrNotLeader, and the client refreshes its
// metadata. Every request crosses the fault network on behalf of the
// client's id, so a kill, a cut link, a slow node or an armed lost reply
// reaches it as it reaches the lab's clients.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Epoch errors of a read that names the leader epoch it expects.
var (
	// ErrFencedEpoch: the client's leader epoch is older than the
	// partition's: its metadata is stale.
	ErrFencedEpoch = errors.New("fenced leader epoch")
	// ErrUnknownEpoch: the client's leader epoch is newer than the node's:
	// the node has not caught up with the election the client heard of.
	ErrUnknownEpoch = errors.New("unknown leader epoch")
)

// OutsideRecord is one record an outside client produces: Key, Value,
// MsgID and Timestamp (unix nanoseconds, 0 for the leader's clock); the
// partition assigns Offset and Epoch.
type OutsideRecord = partlog.Record

// OutsideBatch is one batch an outside client produces to one partition.
type OutsideBatch struct {
	ProducerID int64 // 0: not idempotent
	BaseSeq    int32
	Records    []OutsideRecord
}

// ProduceAnswer is a node's answer to an outside produce.
type ProduceAnswer struct {
	BaseOffset int64 // -1 for acks=0
	LogStart   int64
	Duplicate  bool // a repeat of one of the producer's last batches, answered with the original offset
}

// ProduceOn writes b to tp on node, which must lead tp, on behalf of
// client. Errors wrap ErrNotLeader (nothing written), ErrUnknownOutcome
// (maybe written), ErrOutOfOrderSequence, ErrDuplicateSequence, or the
// network's errors.
func (c *Cluster) ProduceOn(ctx context.Context, node, client string, tp TopicPartition, b OutsideBatch, acks Acks) (ProduceAnswer, error) {
	if _, err := c.topicPartition(tp); err != nil {
		return ProduceAnswer{}, err
	}
	pb := partlog.Batch{ProducerID: b.ProducerID, BaseSeq: b.BaseSeq, Records: b.Records}
	var ans ProduceAnswer
	err := c.net.Call(ctx, client, node, raftnet.RequestData, func() error {
		rep := c.replicaOn(node, tp.String())
		if rep == nil {
			return fmt.Errorf("%w: %s has no replica of %s", ErrNotLeader, node, tp)
		}
		resp, err := rep.produce(pb, acks)
		if err != nil {
			return err
		}
		ans = ProduceAnswer{BaseOffset: resp.base, Duplicate: resp.duplicate}
		ans.LogStart, _, _ = rep.partition().state()
		return nil
	})
	return ans, err
}

// FetchOn reads committed records of tp from offset on node, which must
// lead it and be ready, up to about maxBytes of keys and values (at least
// one record). A leaderEpoch of -1 skips the epoch check.
func (c *Cluster) FetchOn(ctx context.Context, node, client string, tp TopicPartition, offset int64, maxBytes int, leaderEpoch int32) (FetchResult, error) {
	if _, err := c.topicPartition(tp); err != nil {
		return FetchResult{}, err
	}
	var out FetchResult
	err := c.net.Call(ctx, client, node, raftnet.RequestData, func() error {
		rep := c.replicaOn(node, tp.String())
		if rep == nil || !rep.readyLeader() {
			return fmt.Errorf("%w: %s does not lead %s", ErrNotLeader, node, tp)
		}
		term := rep.raft().CurrentTerm()
		if err := checkEpoch(tp, leaderEpoch, term); err != nil {
			return err
		}
		err := readOn(rep, tp, offset, maxBytes, term, &out)
		if lost := rep.unprovenOutOfRange(err); lost != nil {
			out = FetchResult{}
			return lost
		}
		return err
	})
	return out, err
}

// readOn is FetchOn's read, under the partition's lock.
func readOn(rep *replica, tp TopicPartition, offset int64, maxBytes int, term uint64, out *FetchResult) error {
	f := rep.partition()
	f.mu.RLock()
	defer f.mu.RUnlock()
	l := f.log
	*out = FetchResult{HighWatermark: l.EndOffset(), LogStart: l.StartOffset(), Leader: rep.node, Epoch: term}
	if offset < l.StartOffset() || offset > l.EndOffset() {
		return fmt.Errorf("fetch %s at %d: %w: the log holds %d to %d", tp, offset, ErrOffsetOutOfRange, l.StartOffset(), l.EndOffset()-1)
	}
	if offset == l.EndOffset() {
		return nil
	}
	// The first read is small, to learn the records' size; the next
	// asks for about as many as fit. Reading a few at a time would
	// decode a large batch from its start again for every few.
	size, want := 0, 64
	for off := offset; off < l.EndOffset() && (size < maxBytes || len(out.Records) == 0); {
		recs, err := l.Read(off, want)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", tp, err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if size >= maxBytes && len(out.Records) > 0 {
				break
			}
			out.Records = append(out.Records, toRecord(r))
			size += len(r.Key) + len(r.Value) + 16
		}
		off = recs[len(recs)-1].Offset + 1
		if avg := size / len(out.Records); avg > 0 {
			want = max(64, (maxBytes-size)/avg+1)
		}
	}
	return nil
}

// LogGrowth returns a channel closed when tp's log on node next grows, or
// nil when node has no replica of it: a long poll waits on it.
func (c *Cluster) LogGrowth(node string, tp TopicPartition) <-chan struct{} {
	rep := c.replicaOn(node, tp.String())
	if rep == nil || rep.partition() == nil {
		return nil
	}
	return rep.partition().growth()
}

func checkEpoch(tp TopicPartition, want int32, term uint64) error {
	switch {
	case want < 0:
		return nil
	case uint64(want) < term:
		return fmt.Errorf("%w: %s is at epoch %d, the request names %d", ErrFencedEpoch, tp, term, want)
	case uint64(want) > term:
		return fmt.Errorf("%w: %s is at epoch %d here, the request names %d", ErrUnknownEpoch, tp, term, want)
	}
	return nil
}

// Offset lookups of ListOffsetsOn.
const (
	OffsetLatest   int64 = -1 // the high-water mark
	OffsetEarliest int64 = -2 // the log start
)

// ListOffsetsOn answers where tp starts, ends, or first reaches a
// timestamp (unix milliseconds; OffsetLatest and OffsetEarliest as Kafka
// names them), on node, which must lead it. For a timestamp no record
// reaches, the offset is -1 as in Kafka. It also returns the leader epoch.
func (c *Cluster) ListOffsetsOn(ctx context.Context, node, client string, tp TopicPartition, at int64, leaderEpoch int32) (offset int64, epoch uint64, err error) {
	if _, err := c.topicPartition(tp); err != nil {
		return 0, 0, err
	}
	err = c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		rep := c.replicaOn(node, tp.String())
		if rep == nil || !rep.readyLeader() {
			return fmt.Errorf("%w: %s does not lead %s", ErrNotLeader, node, tp)
		}
		epoch = rep.raft().CurrentTerm()
		if err := checkEpoch(tp, leaderEpoch, epoch); err != nil {
			return err
		}
		f := rep.partition()
		f.mu.RLock()
		defer f.mu.RUnlock()
		switch at {
		case OffsetLatest:
			offset = f.log.EndOffset()
		case OffsetEarliest:
			offset = f.log.StartOffset()
		default:
			var ok bool
			if offset, ok = f.log.OffsetForTime(at * int64(time.Millisecond)); !ok {
				offset = -1
			}
		}
		return nil
	})
	return offset, epoch, err
}

// PartitionMetadata is a partition as a metadata answer describes it.
type PartitionMetadata struct {
	Partition int
	Leader    string // "" while none is ready
	Epoch     uint64 // the leader's epoch
	Replicas  []string
	InSync    []string // live replicas caught up to the leader's high-water mark
}

// TopicMetadata is a topic as a metadata answer describes it.
type TopicMetadata struct {
	Name       string
	Internal   bool
	Partitions []PartitionMetadata
}

// ClusterMetadata is what a node tells a client about the cluster.
type ClusterMetadata struct {
	Nodes      []string // the live nodes
	Controller string
	Topics     []TopicMetadata
}

// MetadataOn answers a metadata request on node: the live nodes, and the
// topics asked for (all when topics is nil), each partition's leader,
// replicas and in-sync replicas.
func (c *Cluster) MetadataOn(ctx context.Context, node, client string, topics []string) (ClusterMetadata, error) {
	var md ClusterMetadata
	err := c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		c.mu.Lock()
		for _, id := range c.nodeIDs {
			if c.nodes[id].up {
				md.Nodes = append(md.Nodes, id)
			}
		}
		recs := c.topicsLocked()
		c.mu.Unlock()
		if l := c.leaderOf(controllerGroup); l != nil {
			md.Controller = l.node
		}
		for _, rec := range recs {
			if topics != nil && !slices.Contains(topics, rec.Config.Name) {
				continue
			}
			md.Topics = append(md.Topics, c.topicMetadata(rec))
		}
		return nil
	})
	return md, err
}

func (c *Cluster) topicMetadata(rec topicRecord) TopicMetadata {
	tm := TopicMetadata{Name: rec.Config.Name, Internal: IsInternalTopic(rec.Config.Name)}
	for p, replicas := range rec.Placement {
		pm := PartitionMetadata{Partition: p, Replicas: slices.Clone(replicas)}
		group := TopicPartition{rec.Config.Name, p}.String()
		var hwm int64 = -1
		if l := c.leaderOf(group); l != nil && l.readyLeader() {
			pm.Leader, pm.Epoch = l.node, l.raft().CurrentTerm()
			_, hwm, _ = l.partition().state()
		}
		for _, id := range replicas {
			rep := c.replicaOn(id, group)
			if rep == nil {
				continue
			}
			if _, h, _ := rep.partition().state(); hwm < 0 || h >= hwm {
				pm.InSync = append(pm.InSync, id)
			}
		}
		tm.Partitions = append(tm.Partitions, pm)
	}
	return tm
}

// InitProducerIDOn hands an idempotent outside producer an id from the
// controller, asked through node.
func (c *Cluster) InitProducerIDOn(ctx context.Context, node, client string) (int64, error) {
	var pid int64
	err := c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		var err error
		pid, err = c.allocProducerID(ctx)
		return err
	})
	return pid, err
}

// CreateTopicOn creates a topic at an outside client's request, through
// node.
func (c *Cluster) CreateTopicOn(ctx context.Context, node, client string, cfg TopicConfig) error {
	return c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		return c.CreateTopic(ctx, cfg)
	})
}

// NodeUp reports whether node is up.
func (c *Cluster) NodeUp(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	return n != nil && n.up
}

// Groups of outside clients, Kafka's classic protocol (see groupcoord).
type (
	// GroupProtocol is one way a Kafka client can be assigned.
	GroupProtocol = groupcoord.Protocol
	// GroupJoin is a join request; an outside client's names a protocol
	// type and its protocols.
	GroupJoin = groupcoord.JoinRequest
	// GroupJoinAnswer answers a join.
	GroupJoinAnswer = groupcoord.JoinResult
	// GroupJoinMember is a member as the group's leader learns of it.
	GroupJoinMember = groupcoord.JoinMember
	// GroupAssignment is the leader's assignment for one member.
	GroupAssignment = groupcoord.SyncAssignment
	// GroupDescription is a copy of a group's state.
	GroupDescription = groupcoord.Group
)

// onCoordinator runs fn on node's coordinator of group, across the network.
func (c *Cluster) onCoordinator(ctx context.Context, node, client, group string, kind raftnet.RequestKind, fn func(*coordinator) error) error {
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	return c.net.Call(ctx, client, node, kind, func() error {
		co := c.groups.coordinatorOn(node, p)
		if co == nil {
			return fmt.Errorf("%w: %s does not coordinate group %s", ErrNotCoordinator, node, group)
		}
		return fn(co)
	})
}

// FindCoordinatorOn asks node which node coordinates group. It fails with
// ErrNoLeader while the group's partition of __consumer_offsets has no
// ready leader.
func (c *Cluster) FindCoordinatorOn(ctx context.Context, node, client, group string) (string, error) {
	if err := groupcoord.ValidateGroupName(group); err != nil {
		return "", gcErr(err)
	}
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	var coord string
	err := c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		co := c.groups.active()[p]
		if co == nil {
			return fmt.Errorf("%w for group %s: %s/%d has no leader ready to coordinate", ErrNoLeader, group, OffsetsTopic, p)
		}
		coord = co.rep.node
		return nil
	})
	return coord, err
}

// JoinGroupOn joins (or rejoins) a group on its coordinator, node, and
// waits for the rebalance to complete.
func (c *Cluster) JoinGroupOn(ctx context.Context, node string, req GroupJoin) (GroupJoinAnswer, error) {
	var ans GroupJoinAnswer
	err := c.onCoordinator(ctx, node, req.ClientID, req.Group, raftnet.RequestMetadata, func(co *coordinator) error {
		var err error
		ans, err = co.join(ctx, req)
		return gcErr(err)
	})
	return ans, err
}

// SyncGroupOn hands the coordinator the leader's assignment (the others
// send none) and waits for the member's own part.
func (c *Cluster) SyncGroupOn(ctx context.Context, node, client, group, member string, generation int, assignments map[string]GroupAssignment) ([]byte, error) {
	var data []byte
	err := c.onCoordinator(ctx, node, client, group, raftnet.RequestMetadata, func(co *coordinator) error {
		var err error
		data, err = co.sync(ctx, group, member, generation, assignments)
		return gcErr(err)
	})
	return data, err
}

// HeartbeatOn keeps a member's session alive.
func (c *Cluster) HeartbeatOn(ctx context.Context, node, client, group, member string, generation int) error {
	return c.onCoordinator(ctx, node, client, group, raftnet.RequestMetadata, func(co *coordinator) error {
		_, err := co.heartbeat(group, member, generation)
		return gcErr(err)
	})
}

// LeaveGroupOn removes a member at its request.
func (c *Cluster) LeaveGroupOn(ctx context.Context, node, client, group, member string) error {
	return c.onCoordinator(ctx, node, client, group, raftnet.RequestMetadata, func(co *coordinator) error {
		return gcErr(co.leave(group, member))
	})
}

// CommitOn stores a member's offsets, fenced by its member id and
// generation (-1 and "" for a client outside any membership). It is an
// ack request: an armed lost ack for client drops it.
func (c *Cluster) CommitOn(ctx context.Context, node, client, group, member string, generation int, offsets map[TopicPartition]int64) error {
	return c.onCoordinator(ctx, node, client, group, raftnet.RequestAck, func(co *coordinator) error {
		return co.commit(client, group, member, generation, offsets)
	})
}

// CommittedOn returns a group's committed offsets for tps (every one it
// has when tps is nil); -1 for a partition with none.
func (c *Cluster) CommittedOn(ctx context.Context, node, client, group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	var out map[TopicPartition]int64
	err := c.onCoordinator(ctx, node, client, group, raftnet.RequestMetadata, func(co *coordinator) error {
		if tps != nil {
			var err error
			out, err = co.committed(group, tps)
			return err
		}
		if err := co.current(); err != nil {
			return err
		}
		out = map[TopicPartition]int64{}
		if g, ok := co.describe(group); ok {
			for tp, o := range g.Offsets {
				out[fromGC(tp)] = o.Offset
			}
		}
		return nil
	})
	return out, err
}

// DescribeGroupOn copies a group's state from its coordinator, node; ok
// is false for a group it does not know.
func (c *Cluster) DescribeGroupOn(ctx context.Context, node, client, group string) (g GroupDescription, ok bool, err error) {
	err = c.onCoordinator(ctx, node, client, group, raftnet.RequestMetadata, func(co *coordinator) error {
		g, ok = co.describe(group)
		return nil
	})
	return g, ok, err
}

// ListGroupsOn lists the groups node coordinates.
func (c *Cluster) ListGroupsOn(ctx context.Context, node, client string) ([]GroupDescription, error) {
	var out []GroupDescription
	err := c.net.Call(ctx, client, node, raftnet.RequestMetadata, func() error {
		for _, co := range c.groups.active() {
			if co.rep.node == node {
				out = append(out, co.describeAll()...)
			}
		}
		return nil
	})
	return out, err
}

// EventClient is reported by a front end for outside clients: a
// connection opened or closed and why, an error it answered.
const EventClient EventKind = "client"

// Report adds an outside front end's event to the cluster's stream.
func (c *Cluster) Report(e Event) {
	if e.Kind == "" {
		e.Kind = EventClient
	}
	c.events.emit(e)
}

// WatchNodes calls fn after every kill (up false) and restart (up true)
// of a node, until the returned stop is called. fn runs on the goroutine
// that killed or restarted the node and must not kill or restart one.
func (c *Cluster) WatchNodes(fn func(node string, up bool)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchSeq++
	id := c.watchSeq
	if c.watchers == nil {
		c.watchers = map[uint64]func(string, bool){}
	}
	c.watchers[id] = fn
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.watchers, id)
	}
}

func (c *Cluster) nodeChanged(node string, up bool) {
	c.mu.Lock()
	fns := make([]func(string, bool), 0, len(c.watchers))
	for _, fn := range c.watchers {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(node, up)
	}
}
