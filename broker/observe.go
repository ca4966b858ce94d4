package broker

// What the broker shows of itself: Snapshot, a plain copy of everything
// it knows at one moment, and the event stream of what happens between
// snapshots (Subscribe, Events).

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/disk"
	"github.com/mqlab/mqlab/broker/fanout"
	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Snapshot is a plain copy of everything the broker knows at one moment.
// It shares no memory with the cluster.
type Snapshot struct {
	Time       time.Time
	Timing     string
	Nodes      []NodeState
	CutLinks   [][2]string // node-to-node links cut by isolate or partition
	Controller GroupState
	Topics     []TopicState
	Queues     []QueueState
	Groups     []ConsumerGroupState // consumer groups, by name
}

// NodeState is one node.
type NodeState struct {
	ID       string
	Up       bool
	Isolated bool // cut from clients and peers
	Latency  time.Duration
	Leads    []string // groups this node leads: "controller", "orders/0", …
}

// GroupState is a raft group seen from its leader.
type GroupState struct {
	Leader string // "" when none
	Epoch  uint64
}

// TopicState is a topic with its partitions.
type TopicState struct {
	Config     TopicConfig
	Partitions []PartitionState
}

// PartitionState is one partition: its leader and every replica.
type PartitionState struct {
	Topic     string
	Partition int
	Leader    string // the node leading at the highest epoch, "" when none
	Epoch     uint64 // the leader's epoch; without a leader, the highest among live replicas; with every replica down, the last their disks hold
	Replicas  []ReplicaState
	Producers []partlog.ProducerState // idempotent producers the leader remembers
}

// ReplicaState is one replica's log.
type ReplicaState struct {
	Node  string
	Up    bool
	Role  string // "leader", "follower", "candidate" or "down"
	Epoch uint64 // the replica's current raft term
	// LogStart is the first retained offset, HighWatermark the next offset
	// to be committed as far as this replica knows, LogEnd the next offset
	// it would write (uncommitted entries included).
	LogStart      int64
	HighWatermark int64
	LogEnd        int64
	Entries       []Entry   // a window ending at LogEnd
	Segments      []Segment // the committed log's segments
	Truncations   []Truncation
	Raft          RaftState // the replica's raft: contact, election clock, RPCs
	// HeldBack counts the reads this replica answered as leader while
	// its log held records above its high-water mark: records a reader
	// asked near and was not given, as they were not yet committed.
	HeldBack int64
}

// RaftState is what a replica's raft is doing, in the spirit of RaftScope:
// when it last heard from a leader, how soon it would stand for election,
// and the last RPCs it sent each peer, as the fault network carried them.
type RaftState struct {
	// SinceContact is how long ago a follower last heard from a leader
	// (0 for a leader).
	SinceContact time.Duration
	// ElectionIn is how long a follower that goes on hearing nothing has
	// at least before it stands for election: the heartbeat timeout less
	// SinceContact (raft waits a random time in [t, 2t)), 0 once overdue;
	// -1 for a leader.
	ElectionIn time.Duration
	Exchanges  []raftnet.Exchange
}

// Entry is one record in a replica's log.
type Entry struct {
	Offset    int64
	Epoch     uint64
	Key       string
	Value     string
	MsgID     string
	Timestamp time.Time
	Committed bool
}

// Segment is one segment of a partition's log.
type Segment = partlog.SegmentInfo

// DefaultWindow is how many entries per replica Snapshot includes.
const DefaultWindow = 32

// Snapshot returns the cluster's state with the last DefaultWindow entries
// of every replica.
func (c *Cluster) Snapshot() Snapshot { return c.SnapshotWindow(DefaultWindow) }

// SnapshotWindow returns the cluster's state with up to window entries of
// every replica, the newest ones.
func (c *Cluster) SnapshotWindow(window int) Snapshot {
	c.mu.Lock()
	s := Snapshot{Time: c.now(), Timing: c.timing.Name, CutLinks: c.net.CutLinks()}
	type hosted struct {
		node string
		up   bool
		rep  *replica
		term uint64 // a down replica's: the last term its disk holds
	}
	groupReps := map[string][]hosted{}
	for _, id := range c.nodeIDs {
		n := c.nodes[id]
		ns := NodeState{ID: id, Up: n.up, Isolated: !c.net.ClientLinkUp(id), Latency: c.net.Latency(id)}
		for g, rep := range n.replicas {
			if rep.isLeader() {
				ns.Leads = append(ns.Leads, g)
			}
		}
		sortGroups(ns.Leads)
		s.Nodes = append(s.Nodes, ns)
	}
	topics := c.topicsLocked()
	for _, t := range topics {
		for p, nodes := range t.Placement {
			g := TopicPartition{t.Config.Name, p}.String()
			for _, id := range nodes {
				n := c.nodes[id]
				groupReps[g] = append(groupReps[g], hosted{id, n.up, n.replicas[g], diskTerm(n.disks[g])})
			}
		}
	}
	var ctrl []*replica
	for _, id := range c.nodeIDs {
		if r := c.nodes[id].replicas[controllerGroup]; r != nil && c.nodes[id].up {
			ctrl = append(ctrl, r)
		}
	}
	c.mu.Unlock()

	s.Controller = groupState(ctrl)
	for _, t := range topics {
		ts := TopicState{Config: t.Config}
		for p := range t.Placement {
			g := TopicPartition{t.Config.Name, p}.String()
			ps := PartitionState{Topic: t.Config.Name, Partition: p}
			var live []*replica
			for _, h := range groupReps[g] {
				if !h.up || h.rep == nil {
					ps.Replicas = append(ps.Replicas, ReplicaState{Node: h.node, Role: "down", Epoch: h.term})
					continue
				}
				live = append(live, h.rep)
				ps.Replicas = append(ps.Replicas, h.rep.state(window))
			}
			gs := groupState(live)
			ps.Leader, ps.Epoch = gs.Leader, gs.Epoch
			if len(live) == 0 {
				// Every replica is down: the epoch is the last one their
				// disks hold, not 0, so a restart shows the next one.
				for _, h := range groupReps[g] {
					ps.Epoch = max(ps.Epoch, h.term)
				}
			}
			for _, r := range live {
				if r.node == ps.Leader {
					ps.Producers = r.partition().producers()
				}
			}
			ts.Partitions = append(ts.Partitions, ps)
		}
		s.Topics = append(s.Topics, ts)
	}
	s.Queues = c.queueStates(window)
	s.Groups = c.consumerGroupStates(s)
	return s
}

// diskTerm is the last raft term a replica's disk holds, 0 for none.
func diskTerm(d *disk.Disk) uint64 {
	if d == nil {
		return 0
	}
	term, _ := d.Stable.GetUint64(keyCurrentTerm)
	return term
}

// keyCurrentTerm is the stable store's key raft keeps its current term
// under.
var keyCurrentTerm = []byte("CurrentTerm")

// groupState picks the leader at the highest term among live replicas,
// counting a new leader only once it has passed its barrier and serves
// what was committed before it; until then, and with no leader, the epoch
// is the highest term any replica has seen.
func groupState(reps []*replica) GroupState {
	var gs GroupState
	var leaderTerm uint64
	for _, r := range reps {
		rf := r.raft()
		term := rf.CurrentTerm()
		if r.readyLeader() && (gs.Leader == "" || term > leaderTerm) {
			gs.Leader, leaderTerm = r.node, term
		}
		if term > gs.Epoch {
			gs.Epoch = term
		}
	}
	if gs.Leader != "" {
		gs.Epoch = leaderTerm
	}
	return gs
}

func (f *partitionFSM) producers() []partlog.ProducerState {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.log.Producers()
}

// roleOf names a live replica's raft role as the snapshot shows it.
func roleOf(r *raft.Raft) string {
	switch r.State() {
	case raft.Leader:
		return "leader"
	case raft.Candidate:
		return "candidate"
	}
	return "follower"
}

// state copies one live replica's view of its log.
func (rep *replica) state(window int) ReplicaState {
	r := rep.raft()
	rs := ReplicaState{Node: rep.node, Up: true, Epoch: r.CurrentTerm(), Role: roleOf(r), Raft: rep.raftState(r), HeldBack: rep.heldBack.Load()}
	tail := rep.tail(rep.lastIndex())
	f := rep.partition()
	f.mu.RLock()
	rs.LogStart, rs.HighWatermark = f.log.StartOffset(), f.log.EndOffset()
	rs.LogEnd = rs.HighWatermark
	if n := len(tail); n > 0 {
		rs.LogEnd = tail[n-1].base + int64(tail[n-1].count)
	}
	// The window ends at LogEnd: committed records first, then the tail.
	uncommitted := int(rs.LogEnd - rs.HighWatermark)
	committed := max(0, window-uncommitted)
	from := max(rs.LogStart, rs.HighWatermark-int64(committed))
	for _, r := range f.log.Window(from, committed) {
		rs.Entries = append(rs.Entries, entryOf(r, true))
	}
	rs.Segments = f.log.Segments()
	f.mu.RUnlock()
	skip := max(0, uncommitted-window)
	for _, e := range tail {
		cmd, err := partcmd.Decode(e.data)
		if err != nil {
			continue
		}
		for k, r := range cmd.Batch.Records {
			if skip > 0 {
				skip--
				continue
			}
			r.Offset, r.Epoch = e.base+int64(k), e.epoch
			if cmd.Kafka {
				r.MsgID = f.log.WireMsgID(r)
			}
			rs.Entries = append(rs.Entries, entryOf(r, false))
		}
	}
	rep.mu.Lock()
	rs.Truncations = append([]Truncation(nil), rep.truncations...)
	rep.mu.Unlock()
	return rs
}

func entryOf(r partlog.Record, committed bool) Entry {
	return Entry{Offset: r.Offset, Epoch: r.Epoch, Key: string(r.Key), Value: string(r.Value), MsgID: r.MsgID,
		Timestamp: time.Unix(0, r.Timestamp), Committed: committed}
}

// sortGroups puts the controller first, then partitions by name.
func sortGroups(gs []string) {
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && groupLess(gs[j], gs[j-1]); j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
}

func groupLess(a, b string) bool {
	if a == controllerGroup || b == controllerGroup {
		return a == controllerGroup && b != controllerGroup
	}
	ta, ea := ParseTopicPartition(a)
	tb, eb := ParseTopicPartition(b)
	if ea != nil || eb != nil || ta.Topic != tb.Topic {
		return a < b
	}
	return ta.Partition < tb.Partition
}

func (rep *replica) raftState(r *raft.Raft) RaftState {
	st := RaftState{ElectionIn: -1}
	if r.State() != raft.Leader {
		if last := r.LastContact(); !last.IsZero() {
			st.SinceContact = time.Since(last)
		}
		st.ElectionIn = max(0, rep.c.paced(rep.c.timing.HeartbeatTimeout)-st.SinceContact)
	}
	if rep.trans != nil {
		st.Exchanges = rep.trans.Exchanges()
	}
	return st
}

// EventKind names what happened.
type EventKind string

// The kinds of event the broker reports.
const (
	EventLeaderElected  EventKind = "leader-elected"  // a replica won an election: Node leads Group at Epoch
	EventSteppedDown    EventKind = "stepped-down"    // a leader lost leadership
	EventAppend         EventKind = "append"          // a replica stored entries in its log: offsets From..To (To exclusive), maybe not yet committed
	EventCommit         EventKind = "commit"          // the leader's high-water mark moved to To
	EventTruncation     EventKind = "truncation"      // a replica cut its uncommitted tail: offsets From..To of Epochs
	EventSegmentDeleted EventKind = "segment-deleted" // retention deleted a closed segment; the log now starts at To
	EventCompacted      EventKind = "compacted"       // a compaction pass cleaned the closed segments From..To (To exclusive)
	EventTopicCreated   EventKind = "topic-created"
	EventProducerID     EventKind = "producer-id" // the controller handed out a producer id
	EventNodeKilled     EventKind = "node-killed"
	EventNodeRestarted  EventKind = "node-restarted"
	EventLinkCut        EventKind = "link-cut"
	EventLinkHealed     EventKind = "link-healed"
	EventSlow           EventKind = "slow"
	EventFaultArmed     EventKind = "fault-armed" // a lost reply or lost ack waits for a client's next request
	EventFaultFired     EventKind = "fault-fired" // an armed fault bit: the reply or the ack was lost
	EventLeaderTransfer EventKind = "leader-transfer"
	EventRaftLog        EventKind = "raft-log" // a line of raft's own log, when Config.RaftLog asks for them
	EventFiles          EventKind = "files"    // a replica's segment files: read back at a restart (a torn tail cut), or a write that failed
)

// Event is one thing that happened in the cluster. Fields that do not apply
// to a kind are zero.
type Event struct {
	Seq    uint64
	Time   time.Time
	Kind   EventKind
	Node   string // the node it happened on
	Group  string // "orders/0", or "controller"
	Epoch  uint64
	From   int64 // an offset range, To exclusive
	To     int64
	Epochs []uint64 // epochs of truncated entries
	Client string
	MsgID  string // the message a queue event is about
	Text   string // one readable sentence

	// Consumer group events: the group, the member and the generation.
	ConsumerGroup string
	Member        string
	Generation    int

	// lazy marks an append or commit event whose Text is still to be
	// written: one of each per produced batch, with its sentence
	// determined by the other fields, so the bus writes it only when the
	// event leaves it (to a subscriber or through since) and a cluster
	// nobody watches never formats one.
	lazy bool
}

// fillText writes a lazy event's sentence.
func (e *Event) fillText() {
	if !e.lazy {
		return
	}
	e.lazy = false
	var buf [128]byte
	b := append(buf[:0], e.Group...)
	switch e.Kind {
	case EventAppend: // "orders/0 on n1 wrote offsets 10–19 at epoch 2"
		b = append(b, " on "...)
		b = append(b, e.Node...)
		b = append(b, " wrote offsets "...)
		b = strconv.AppendInt(b, e.From, 10)
		b = append(b, "–"...)
		b = strconv.AppendInt(b, e.To-1, 10)
		b = append(b, " at epoch "...)
		b = strconv.AppendUint(b, e.Epoch, 10)
	case EventCommit: // "orders/0 committed offsets 10–19; high-water mark 20"
		b = append(b, " committed offsets "...)
		b = strconv.AppendInt(b, e.From, 10)
		b = append(b, "–"...)
		b = strconv.AppendInt(b, e.To-1, 10)
		b = append(b, "; high-water mark "...)
		b = strconv.AppendInt(b, e.To, 10)
	}
	e.Text = string(b)
}

func (e Event) String() string {
	return fmt.Sprintf("%s %-15s %s", e.Time.Format("15:04:05.000"), e.Kind, e.Text)
}

// Subscription delivers events as they happen. A subscriber that falls
// behind loses events rather than slowing the broker; Dropped counts them.
type Subscription = fanout.Subscription[Event]

// eventBus keeps the last events in a ring and fans them out.
type eventBus struct {
	mu   sync.Mutex
	now  func() time.Time
	seq  uint64
	ring []Event
	head int // next write position once the ring is full
	subs fanout.Set[Event]
}

const eventRingSize = 4096

func newEventBus(now func() time.Time) *eventBus {
	return &eventBus{now: now}
}

func (b *eventBus) emit(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e.Seq = b.seq
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	if b.subs.Len() > 0 {
		e.fillText() // once for every subscriber, and for the ring
	}
	if len(b.ring) < eventRingSize {
		b.ring = append(b.ring, e)
	} else {
		b.ring[b.head] = e
		b.head = (b.head + 1) % eventRingSize
	}
	b.subs.Send(e)
}

// since returns retained events with Seq > seq, oldest first.
func (b *eventBus) since(seq uint64) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Event
	n := len(b.ring)
	for i := 0; i < n; i++ {
		e := &b.ring[(b.head+i)%n]
		if e.Seq > seq {
			e.fillText() // in the ring too: a second reader finds it written
			out = append(out, *e)
		}
	}
	return out
}

func (b *eventBus) subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = 1024
	}
	return b.subs.Subscribe(buffer)
}

func (b *eventBus) closeAll() { b.subs.CloseAll() }

// EntryAt returns the record at offset as node's replica of tp holds it
// now, committed or in its uncommitted tail, with the epoch it was
// written under: after a failover two replicas can hold different records
// at one offset, and this tells them apart. found is false when the
// replica holds nothing there (before its log start, at or past its log
// end). It fails with ErrNodeDown when node is down and
// ErrUnknownPartition when node holds no replica of tp.
func (c *Cluster) EntryAt(tp TopicPartition, node string, offset int64) (e Entry, found bool, err error) {
	c.mu.Lock()
	n := c.nodes[node]
	var rep *replica
	up := n != nil && n.up
	if up {
		rep = n.replicas[tp.String()]
	}
	c.mu.Unlock()
	switch {
	case n == nil:
		return Entry{}, false, fmt.Errorf("%s: %w", node, ErrUnknownNode)
	case !up:
		return Entry{}, false, fmt.Errorf("%s: %w", node, ErrNodeDown)
	case rep == nil || rep.partition() == nil:
		return Entry{}, false, fmt.Errorf("%s on %s: %w", tp, node, ErrUnknownPartition)
	}
	f := rep.partition()
	f.mu.RLock()
	start, hwm := f.log.StartOffset(), f.log.EndOffset()
	var committed []partlog.Record
	if offset >= start && offset < hwm {
		committed = f.log.Window(offset, 1)
	}
	f.mu.RUnlock()
	if offset < start {
		return Entry{}, false, nil
	}
	if offset < hwm {
		if len(committed) == 0 || committed[0].Offset != offset {
			return Entry{}, false, nil
		}
		return entryOf(committed[0], true), true, nil
	}
	// Above the high-water mark: the uncommitted tail in raft's log.
	for _, t := range rep.tail(rep.lastIndex()) {
		if offset < t.base || offset >= t.base+int64(t.count) {
			continue
		}
		cmd, err := partcmd.Decode(t.data)
		if err != nil {
			return Entry{}, false, fmt.Errorf("%s on %s at %d: %w", tp, node, offset, err)
		}
		k := int(offset - t.base)
		if k >= len(cmd.Batch.Records) {
			return Entry{}, false, nil
		}
		r := cmd.Batch.Records[k]
		r.Offset, r.Epoch = offset, t.epoch
		if cmd.Kafka {
			r.MsgID = f.log.WireMsgID(r)
		}
		return entryOf(r, false), true, nil
	}
	return Entry{}, false, nil
}
