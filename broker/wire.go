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

// Batch is one batch a producer writes to one partition, as the
// partition's log keeps it: the producer's id and first sequence number
// (0 for a producer that is not idempotent) and its records' Key, Value,
// MsgID, Headers and Timestamp (unix nanoseconds, 0 for the leader's
// clock); the partition assigns Offset and Epoch.
type Batch = partlog.Batch

// BatchRecord is one record of a Batch.
type BatchRecord = partlog.Record

// Front is one node as an outside client addresses it. Every request
// crosses the fault network from the client to the node, which answers
// for what it leads and refuses the rest with ErrNotLeader.
type Front struct {
	c            *Cluster
	node, client string
}

// Front returns node's front for requests on behalf of client.
func (c *Cluster) Front(node, client string) Front {
	return Front{c: c, node: node, client: client}
}

// PartitionFront is one partition of a topic on the Front's node: the
// requests a client makes of a partition's leader.
type PartitionFront struct {
	f  Front
	tp TopicPartition
}

// Partition returns the front of tp on the node.
func (f Front) Partition(tp TopicPartition) PartitionFront {
	return PartitionFront{f: f, tp: tp}
}

// ProduceAnswer is a node's answer to an outside produce.
type ProduceAnswer struct {
	BaseOffset int64 // -1 for acks=0
	LogStart   int64
	Duplicate  bool // a repeat of one of the producer's last batches, answered with the original offset
}

// Produce writes b to the partition on the node, which must lead it.
// Errors wrap ErrNotLeader (nothing written), ErrUnknownOutcome
// (maybe written), ErrOutOfOrderSequence, ErrDuplicateSequence, or the
// network's errors.
func (p PartitionFront) Produce(ctx context.Context, b Batch, acks Acks) (ProduceAnswer, error) {
	return p.produceOn(ctx, func(rep *replica) (produceResponse, error) { return rep.produce(b, acks) })
}

// produceOn runs a produce on the node's replica of the partition, as a
// request over the lab's network, and answers with where it landed.
func (p PartitionFront) produceOn(ctx context.Context, produce func(rep *replica) (produceResponse, error)) (ProduceAnswer, error) {
	c, node, tp := p.f.c, p.f.node, p.tp
	if _, err := c.topicPartition(tp); err != nil {
		return ProduceAnswer{}, err
	}
	var ans ProduceAnswer
	err := c.net.Call(ctx, p.f.client, node, raftnet.RequestData, func() error {
		rep := c.replicaOn(node, tp.String())
		if rep == nil {
			return fmt.Errorf("%w: %s has no replica of %s", ErrNotLeader, node, tp)
		}
		resp, err := produce(rep)
		if err != nil {
			return err
		}
		ans = ProduceAnswer{BaseOffset: resp.base, Duplicate: resp.duplicate}
		ans.LogStart, _, _ = rep.partition().state()
		return nil
	})
	return ans, err
}

// WireBatch is a Kafka client's record batch (magic 2) as it arrived,
// its CRC checked by the listener, with what the partition needs to keep
// it without reading its records again.
type WireBatch struct {
	Raw     []byte // the record batch, kept as it is
	Count   int    // its records
	KVBytes int64  // their keys' and values' bytes
	MinTS   int64  // their least timestamp, unix nanoseconds
	Unkeyed int    // the first record without a key, -1 when every record has one
}

// ProduceKafka is Produce for a Kafka client's record batch, kept as it
// arrived: the raft entry carries its bytes, and every replica's segment
// file gets them with only the base offset and leader epoch set.
func (p PartitionFront) ProduceKafka(ctx context.Context, b WireBatch, acks Acks) (ProduceAnswer, error) {
	return p.produceOn(ctx, func(rep *replica) (produceResponse, error) {
		return rep.produceKafka(b, acks)
	})
}

// Fetch reads committed records of the partition from offset on the
// node, which must lead it and be ready, up to about maxBytes of keys and values (at least
// one record). A leaderEpoch of -1 skips the epoch check.
func (p PartitionFront) Fetch(ctx context.Context, offset int64, maxBytes int, leaderEpoch int32) (FetchResult, error) {
	return p.fetch(ctx, offset, maxBytes, leaderEpoch, fetchRecords)
}

// FetchFile is Fetch for a client that takes the segment file's bytes as
// they are. When the leader writes the partition's files, the result's
// File is whole batches from the one holding offset, up to about maxBytes
// of the file (at least one batch), and Records are read too only when
// records is set (from offset to File.Next); the caller closes
// File.File. Otherwise, and when File is nil, it is Fetch's result.
func (p PartitionFront) FetchFile(ctx context.Context, offset int64, maxBytes int, leaderEpoch int32, records bool) (FetchResult, error) {
	mode := fetchFile
	if records {
		mode |= fetchRecords
	}
	return p.fetch(ctx, offset, maxBytes, leaderEpoch, mode)
}

// What a fetch reads: records, a file range, or a file range and its
// records.
const (
	fetchRecords = 1 << iota
	fetchFile
)

func (p PartitionFront) fetch(ctx context.Context, offset int64, maxBytes int, leaderEpoch int32, mode int) (FetchResult, error) {
	c, node, tp := p.f.c, p.f.node, p.tp
	if _, err := c.topicPartition(tp); err != nil {
		return FetchResult{}, err
	}
	var out FetchResult
	err := c.net.Call(ctx, p.f.client, node, raftnet.RequestData, func() error {
		rep := c.replicaOn(node, tp.String())
		if rep == nil || !rep.readyLeader() {
			return fmt.Errorf("%w: %s does not lead %s", ErrNotLeader, node, tp)
		}
		term := rep.raft().CurrentTerm()
		if err := checkEpoch(tp, leaderEpoch, term); err != nil {
			return err
		}
		err := readOn(rep, tp, offset, maxBytes, term, mode, &out)
		if lost := rep.unprovenOutOfRange(err); lost != nil {
			out.closeFile()
			out = FetchResult{}
			return lost
		}
		return err
	})
	return out, err
}

// readOn is PartitionFront.Fetch's read, under the partition's lock.
func readOn(rep *replica, tp TopicPartition, offset int64, maxBytes int, term uint64, mode int, out *FetchResult) error {
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
	if mode&fetchFile != 0 {
		// The log holds committed batches only, so the whole range is
		// below the high-water mark.
		rng, ok, err := l.FileRange(offset, maxBytes)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", tp, err)
		}
		if ok {
			out.File = &rng
			if mode&fetchRecords != 0 {
				recs, err := l.Read(offset, int(rng.Next-offset))
				if err != nil {
					out.closeFile()
					return fmt.Errorf("fetch %s: %w", tp, err)
				}
				for _, r := range recs {
					out.Records = append(out.Records, toRecord(r))
				}
			}
			return nil
		}
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

// Growth returns a channel closed when the partition's log on the node
// next grows, or nil when the node has no replica of it: a long poll
// waits on it. It asks nothing across the network.
func (p PartitionFront) Growth() <-chan struct{} {
	rep := p.f.c.replicaOn(p.f.node, p.tp.String())
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

// Offset lookups of PartitionFront.ListOffset.
const (
	OffsetLatest   int64 = -1 // the high-water mark
	OffsetEarliest int64 = -2 // the log start
)

// ListOffset answers where the partition starts, ends, or first reaches
// a timestamp (unix milliseconds; OffsetLatest and OffsetEarliest as
// Kafka names them), on the node, which must lead it. For a timestamp no record
// reaches, the offset is -1 as in Kafka. It also returns the leader epoch.
func (p PartitionFront) ListOffset(ctx context.Context, at int64, leaderEpoch int32) (offset int64, epoch uint64, err error) {
	c, node, tp := p.f.c, p.f.node, p.tp
	if _, err := c.topicPartition(tp); err != nil {
		return 0, 0, err
	}
	err = c.net.Call(ctx, p.f.client, node, raftnet.RequestMetadata, func() error {
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

// Metadata answers a metadata request on the node: the live nodes, and the
// topics asked for (all when topics is nil), each partition's leader,
// replicas and in-sync replicas.
func (f Front) Metadata(ctx context.Context, topics []string) (ClusterMetadata, error) {
	c := f.c
	var md ClusterMetadata
	err := c.net.Call(ctx, f.client, f.node, raftnet.RequestMetadata, func() error {
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

// InitProducerID hands an idempotent outside producer an id from the
// controller, asked through the node.
func (f Front) InitProducerID(ctx context.Context) (int64, error) {
	var pid int64
	err := f.c.net.Call(ctx, f.client, f.node, raftnet.RequestMetadata, func() error {
		var err error
		pid, err = f.c.allocProducerID(ctx)
		return err
	})
	return pid, err
}

// CreateTopic creates a topic at an outside client's request, through
// the node.
func (f Front) CreateTopic(ctx context.Context, cfg TopicConfig) error {
	return f.c.net.Call(ctx, f.client, f.node, raftnet.RequestMetadata, func() error {
		return f.c.CreateTopic(ctx, cfg)
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

// GroupFront is one consumer group as the Front's node sees it: the
// requests a client makes of the group's coordinator.
type GroupFront struct {
	f     Front
	group string
}

// Group returns the front of group on the node.
func (f Front) Group(group string) GroupFront {
	return GroupFront{f: f, group: group}
}

// onCoordinator runs fn on the node's coordinator of the group, across
// the network on behalf of client.
func (g GroupFront) onCoordinator(ctx context.Context, client string, kind raftnet.RequestKind, fn func(*coordinator) error) error {
	c, node, group := g.f.c, g.f.node, g.group
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	return c.net.Call(ctx, client, node, kind, func() error {
		co := c.groups.coordinatorOn(node, p)
		if co == nil {
			return fmt.Errorf("%w: %s does not coordinate group %s", ErrNotCoordinator, node, group)
		}
		return fn(co)
	})
}

// FindCoordinator asks the node which node coordinates the group. It
// fails with ErrNoLeader while the group's partition of __consumer_offsets
// has no ready leader.
func (g GroupFront) FindCoordinator(ctx context.Context) (string, error) {
	c, group := g.f.c, g.group
	if err := groupcoord.ValidateGroupName(group); err != nil {
		return "", gcErr(err)
	}
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	var coord string
	err := c.net.Call(ctx, g.f.client, g.f.node, raftnet.RequestMetadata, func() error {
		co := c.groups.active()[p]
		if co == nil {
			return fmt.Errorf("%w for group %s: %s/%d has no leader ready to coordinate", ErrNoLeader, group, OffsetsTopic, p)
		}
		coord = co.rep.node
		return nil
	})
	return coord, err
}

// Join joins (or rejoins) the group on its coordinator, the node, and
// waits for the rebalance to complete. The request crosses the network on
// behalf of req.ClientID; req.Group is the group's.
func (g GroupFront) Join(ctx context.Context, req GroupJoin) (GroupJoinAnswer, error) {
	req.Group = g.group
	var ans GroupJoinAnswer
	err := g.onCoordinator(ctx, req.ClientID, raftnet.RequestMetadata, func(co *coordinator) error {
		var err error
		ans, err = co.join(ctx, req)
		return gcErr(err)
	})
	return ans, err
}

// Sync hands the coordinator the leader's assignment (the others send
// none) and waits for the member's own part.
func (g GroupFront) Sync(ctx context.Context, member string, generation int, assignments map[string]GroupAssignment) ([]byte, error) {
	var data []byte
	err := g.onCoordinator(ctx, g.f.client, raftnet.RequestMetadata, func(co *coordinator) error {
		var err error
		data, err = co.sync(ctx, g.group, member, generation, assignments)
		return gcErr(err)
	})
	return data, err
}

// Heartbeat keeps a member's session alive.
func (g GroupFront) Heartbeat(ctx context.Context, member string, generation int) error {
	return g.onCoordinator(ctx, g.f.client, raftnet.RequestMetadata, func(co *coordinator) error {
		_, err := co.heartbeat(g.group, member, generation)
		return gcErr(err)
	})
}

// Leave removes a member at its request.
func (g GroupFront) Leave(ctx context.Context, member string) error {
	return g.onCoordinator(ctx, g.f.client, raftnet.RequestMetadata, func(co *coordinator) error {
		return gcErr(co.leave(g.group, member))
	})
}

// Commit stores a member's offsets, fenced by its member id and
// generation (-1 and "" for a client outside any membership). It is an
// ack request: an armed lost ack for the client drops it.
func (g GroupFront) Commit(ctx context.Context, member string, generation int, offsets map[TopicPartition]int64) error {
	return g.onCoordinator(ctx, g.f.client, raftnet.RequestAck, func(co *coordinator) error {
		return co.commit(g.f.client, g.group, member, generation, offsets)
	})
}

// Committed returns the group's committed offsets for tps (every one it
// has when tps is nil); -1 for a partition with none.
func (g GroupFront) Committed(ctx context.Context, tps []TopicPartition) (map[TopicPartition]int64, error) {
	var out map[TopicPartition]int64
	err := g.onCoordinator(ctx, g.f.client, raftnet.RequestMetadata, func(co *coordinator) error {
		if tps != nil {
			var err error
			out, err = co.committed(g.group, tps)
			return err
		}
		if err := co.current(); err != nil {
			return err
		}
		out = map[TopicPartition]int64{}
		if d, ok := co.describe(g.group); ok {
			for tp, o := range d.Offsets {
				out[fromGC(tp)] = o.Offset
			}
		}
		return nil
	})
	return out, err
}

// Describe copies the group's state from its coordinator, the node; ok
// is false for a group it does not know.
func (g GroupFront) Describe(ctx context.Context) (d GroupDescription, ok bool, err error) {
	err = g.onCoordinator(ctx, g.f.client, raftnet.RequestMetadata, func(co *coordinator) error {
		d, ok = co.describe(g.group)
		return nil
	})
	return d, ok, err
}

// ListGroups lists the groups the node coordinates.
func (f Front) ListGroups(ctx context.Context) ([]GroupDescription, error) {
	var out []GroupDescription
	err := f.c.net.Call(ctx, f.client, f.node, raftnet.RequestMetadata, func() error {
		for _, co := range f.c.groups.active() {
			if co.rep.node == f.node {
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
