package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker/groupcoord"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Consumer groups. Offsets and group membership live in the internal topic
// __consumer_offsets, a topic like any other (its partitions are raft
// groups with rf = min(3, nodes)). The leader of partition
// abs(javaHashCode(group)) % P coordinates the group, as in Kafka; when
// that leadership moves, the new leader rebuilds every group it now
// coordinates by replaying its committed log (see coordinator.load). The
// logic of membership, generations, assignment and commit fencing is the
// plain package groupcoord; this file and group_coordinator.go adapt it to
// raft and the network.

// OffsetsTopic is the internal topic that stores committed offsets and
// group metadata.
const OffsetsTopic = "__consumer_offsets"

// IsInternalTopic reports whether a topic name is reserved for the broker:
// names starting with "__", as in Kafka.
func IsInternalTopic(name string) bool { return strings.HasPrefix(name, "__") }

// Consumer group errors, from the plain coordinator.
var (
	// ErrUnknownGroup: no group by that name (describe, seek).
	ErrUnknownGroup = groupcoord.ErrUnknownGroup
	// ErrFenced: a commit (or heartbeat) from a member the group has moved
	// on from — a zombie. Always wrapped with one of ErrStaleGeneration,
	// ErrUnknownMember or ErrNotAssigned, which say why.
	ErrFenced = groupcoord.ErrFenced
	// ErrStaleGeneration: the member speaks for an older generation.
	ErrStaleGeneration = groupcoord.ErrStaleGeneration
	// ErrUnknownMember: the member is no longer in the group.
	ErrUnknownMember = groupcoord.ErrUnknownMember
	// ErrNotAssigned: the partition is not the member's in this generation.
	ErrNotAssigned = groupcoord.ErrNotAssigned
	// ErrRebalanceInProgress: the group is rebalancing; rejoin.
	ErrRebalanceInProgress = groupcoord.ErrRebalanceInProgress
	// ErrInconsistentStrategy: the member asked for another strategy than
	// the group's members use.
	ErrInconsistentStrategy = groupcoord.ErrInconsistentStrategy
	// ErrNotCoordinator: the node asked does not coordinate the group (any
	// more); find the coordinator again.
	ErrNotCoordinator = errors.New("not the group coordinator")
	// ErrConsumerClosed: the consumer was closed or crashed.
	ErrConsumerClosed = errors.New("consumer closed")
)

// Consumer group events.
const (
	EventMemberJoined      EventKind = "member-joined"      // a member joined Group… as Member
	EventMemberLeft        EventKind = "member-left"        // a member left its group (Close)
	EventSessionExpired    EventKind = "session-expired"    // the coordinator dropped a silent member
	EventRebalanceStarted  EventKind = "rebalance-started"  // membership changed; every member must rejoin
	EventRebalance         EventKind = "rebalance"          // the group runs in Generation with a new assignment
	EventOffsetCommit      EventKind = "offset-commit"      // offsets committed in __consumer_offsets
	EventFencedCommit      EventKind = "fenced-commit"      // a zombie's commit was rejected
	EventCoordinatorLoaded EventKind = "coordinator-loaded" // a new coordinator rebuilt its groups from the log
	EventOffsetReset       EventKind = "offset-reset"       // a consumer had no valid position and applied its reset policy
	EventConsumerCrashed   EventKind = "consumer-crashed"   // a consumer stopped without leaving (Crash)
)

// Strategy is how a group spreads partitions over its members.
type Strategy = groupcoord.Strategy

// The assignment strategies.
const (
	StrategyRange      = groupcoord.Range
	StrategyRoundRobin = groupcoord.RoundRobin
)

// ParseStrategy reads "range" or "round-robin" ("" is range).
func ParseStrategy(s string) (Strategy, error) {
	st, err := groupcoord.ParseStrategy(s)
	return st, gcErr(err)
}

// invalidErr is a groupcoord.ErrInvalid error that also matches the
// broker's ErrInvalid, so callers branch on one sentinel for bad input.
type invalidErr struct{ err error }

func (e invalidErr) Error() string   { return e.err.Error() }
func (e invalidErr) Unwrap() []error { return []error{e.err, ErrInvalid} }

func gcErr(err error) error {
	if err != nil && errors.Is(err, groupcoord.ErrInvalid) && !errors.Is(err, ErrInvalid) {
		return invalidErr{err}
	}
	return err
}

// groupService holds the coordinators running on leaders of
// __consumer_offsets partitions.
type groupService struct {
	c          *Cluster
	partitions int           // of __consumer_offsets
	session    time.Duration // default session timeout
	tick       time.Duration // how often coordinators check sessions

	mu     sync.Mutex
	coords map[*replica]*coordinator
}

func newGroupService(c *Cluster, cfg Config) (*groupService, error) {
	if cfg.OffsetsPartitions < 0 || cfg.OffsetsPartitions > MaxPartitions {
		return nil, fmt.Errorf("%w: offsets partitions=%d; want 1 to %d", ErrInvalid, cfg.OffsetsPartitions, MaxPartitions)
	}
	if cfg.SessionTimeout < 0 {
		return nil, fmt.Errorf("%w: session timeout %v is negative", ErrInvalid, cfg.SessionTimeout)
	}
	s := &groupService{c: c, partitions: max(1, cfg.OffsetsPartitions), session: cfg.SessionTimeout,
		coords: map[*replica]*coordinator{}}
	if s.session == 0 {
		s.session = c.timing.SessionTimeout
	}
	s.tick = min(max(c.timing.HeartbeatTimeout/4, 10*time.Millisecond), 250*time.Millisecond)
	return s, nil
}

// createOffsetsTopic creates __consumer_offsets when the cluster starts.
func (c *Cluster) createOffsetsTopic(ctx context.Context) error {
	// Kafka's own segment size for it, 100 MiB: commits come many a second,
	// and a roll of the lab's 16-record default would make new segment
	// files every few polls. Compacted, as in Kafka: only the newest
	// commit of each group and partition, and the newest metadata of each
	// group, matter.
	return c.createTopic(ctx, TopicConfig{Name: OffsetsTopic, Partitions: c.groups.partitions, SegmentBytes: offsetsSegmentBytes, Cleanup: CleanupCompact})
}

const offsetsSegmentBytes = 100 << 20

// offsetsPartitionOf says which partition of __consumer_offsets a raft
// group is, or -1.
func offsetsPartitionOf(group string) int {
	tp, err := ParseTopicPartition(group)
	if err != nil || tp.Topic != OffsetsTopic {
		return -1
	}
	return tp.Partition
}

// CoordinatorPartition is the partition of __consumer_offsets whose leader
// coordinates group.
func (c *Cluster) CoordinatorPartition(group string) TopicPartition {
	return TopicPartition{OffsetsTopic, groupcoord.PartitionFor(group, c.groups.partitions)}
}

// leaderReady starts a coordinator on a replica of __consumer_offsets that
// has just become a leader and passed its barrier, so its log holds every
// committed record. Called from the replica's watch goroutine.
func (s *groupService) leaderReady(rep *replica, term uint64) {
	p := offsetsPartitionOf(rep.group)
	if p < 0 {
		return
	}
	co := newCoordinator(s.c, rep, p, term)
	groups, records, skipped := co.load()
	s.mu.Lock()
	if old := s.coords[rep]; old != nil {
		old.halt()
	}
	s.coords[rep] = co
	s.mu.Unlock()
	rep.done.Add(1) // watch holds the count too, so this cannot race the shutdown's Wait
	go co.run()
	text := fmt.Sprintf("%s now coordinates the groups of %s (epoch %d): rebuilt %d group(s) from %d record(s) of its log", rep.node, rep.group, term, groups, records)
	if skipped > 0 {
		text += fmt.Sprintf(", %d unreadable record(s) skipped", skipped)
	}
	rep.emit(Event{Kind: EventCoordinatorLoaded, Epoch: term, Text: text})
}

// leaderLost stops the coordinator of a replica that stepped down.
func (s *groupService) leaderLost(rep *replica) {
	s.mu.Lock()
	co := s.coords[rep]
	delete(s.coords, rep)
	s.mu.Unlock()
	if co != nil {
		co.halt()
	}
}

// forget removes a stopped coordinator from the registry.
func (s *groupService) forget(co *coordinator) {
	s.mu.Lock()
	if s.coords[co.rep] == co {
		delete(s.coords, co.rep)
	}
	s.mu.Unlock()
}

// coordinatorOn returns the serving coordinator for partition p of
// __consumer_offsets on node, or nil.
func (s *groupService) coordinatorOn(node string, p int) *coordinator {
	rep := s.c.replicaOn(node, TopicPartition{OffsetsTopic, p}.String())
	if rep == nil {
		return nil
	}
	s.mu.Lock()
	co := s.coords[rep]
	s.mu.Unlock()
	if co == nil || !co.serving() {
		return nil
	}
	return co
}

// active returns every serving coordinator, by partition.
func (s *groupService) active() map[int]*coordinator {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]*coordinator{}
	for _, co := range s.coords {
		if co.serving() {
			if cur := out[co.part]; cur == nil || co.term > cur.term {
				out[co.part] = co
			}
		}
	}
	return out
}

// findCoordinator asks a reachable node which node coordinates group.
func (c *Cluster) findCoordinator(ctx context.Context, client, group string, start int) (string, error) {
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	var last error
	for k := range c.nodeIDs {
		id := c.nodeIDs[(start+k)%len(c.nodeIDs)]
		var node string
		err := c.net.Call(ctx, client, id, raftnet.RequestMetadata, func() error {
			co := c.groups.active()[p]
			if co == nil {
				return fmt.Errorf("%w for group %s: %s/%d has no leader ready to coordinate", ErrNoLeader, group, OffsetsTopic, p)
			}
			node = co.rep.node
			return nil
		})
		if err == nil {
			return node, nil
		}
		last = err
		if errors.Is(err, ErrNoLeader) {
			return "", err
		}
	}
	return "", last
}

// coordinatorCall runs fn on group's coordinator on behalf of client,
// across the network, finding the coordinator again and retrying while
// there is none or it moved, until ctx ends. A lost request or reply is
// not retried: the caller cannot know whether it was done. *cache holds
// the coordinator node between calls.
func (c *Cluster) coordinatorCall(ctx context.Context, client, group string, kind raftnet.RequestKind, cache *string, fn func(*coordinator) error) error {
	p := groupcoord.PartitionFor(group, c.groups.partitions)
	backoff := max(c.timing.HeartbeatTimeout/10, time.Millisecond)
	for attempt := 0; ; attempt++ {
		node := ""
		if cache != nil {
			node = *cache
		}
		var err error
		if node == "" {
			node, err = c.findCoordinator(ctx, client, group, attempt)
		}
		if err == nil {
			err = c.net.Call(ctx, client, node, kind, func() error {
				co := c.groups.coordinatorOn(node, p)
				if co == nil {
					return fmt.Errorf("%w: %s does not coordinate group %s", ErrNotCoordinator, node, group)
				}
				return fn(co)
			})
			if err == nil {
				if cache != nil {
					*cache = node
				}
				return nil
			}
		}
		retry := errors.Is(err, ErrNotCoordinator) || errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNotLeader) || errors.Is(err, raftnet.ErrUnreachable)
		if !retry {
			return err
		}
		if cache != nil {
			*cache = ""
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-c.stop:
			t.Stop()
			return ErrClosed
		case <-t.C:
		}
		backoff = min(2*backoff, c.timing.HeartbeatTimeout)
	}
}

// partitionCount is the number of partitions of a topic consumers may
// read, 0 for an unknown or internal one.
func (c *Cluster) partitionCount(topic string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.topics[topic]
	if !ok || IsInternalTopic(topic) {
		return 0
	}
	return len(rec.Placement)
}

func toGC(tp TopicPartition) groupcoord.TopicPartition {
	return groupcoord.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
}

func fromGC(tp groupcoord.TopicPartition) TopicPartition {
	return TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
}

func fromGCs(tps []groupcoord.TopicPartition) []TopicPartition {
	out := make([]TopicPartition, len(tps))
	for i, tp := range tps {
		out[i] = fromGC(tp)
	}
	return out
}

func tpList(tps []TopicPartition) string {
	if len(tps) == 0 {
		return "none"
	}
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return strings.Join(s, ", ")
}
