package groupcoord

// The Coordinator and the groups it serves: their states, the changes it
// reports, and copies of a group for display.

import (
	"slices"
	"sort"
	"time"
)

// State is where a group is in its rebalance cycle.
type State string

const (
	// Empty: no members (offsets may still be committed).
	Empty State = "empty"
	// PreparingRebalance: membership changed; every member must rejoin.
	PreparingRebalance State = "preparing-rebalance"
	// CompletingRebalance: the new generation is assigned and its metadata
	// is being written to __consumer_offsets.
	CompletingRebalance State = "completing-rebalance"
	// Stable: every member knows its partitions in the current generation.
	Stable State = "stable"
)

// ChangeKind names something that happened to a group.
type ChangeKind string

const (
	MemberJoined     ChangeKind = "member-joined"
	MemberLeft       ChangeKind = "member-left"
	SessionExpired   ChangeKind = "session-expired"
	RebalanceStarted ChangeKind = "rebalance-started"
	// Rebalanced: a generation's metadata is committed; the group runs
	// with the new assignment.
	Rebalanced ChangeKind = "rebalance"
)

// Change is one thing that happened, for the event stream.
type Change struct {
	Kind       ChangeKind
	Group      string
	Member     string
	ClientID   string
	Generation int
	Text       string
}

// Coordinator holds the groups one coordinator serves. It is not safe for
// concurrent use: the broker's adapter holds a lock around every call.
type Coordinator struct {
	partitions func(topic string) int
	groups     map[string]*group
}

type group struct {
	id         string
	state      State
	generation int
	persisted  int // the newest generation whose metadata is committed
	strategy   Strategy
	members    map[string]*member
	offsets    map[TopicPartition]Offset
	nextSeq    int
	deadline   time.Time // of the rebalance in progress
	reason     string    // why it rebalances
	// topics are those its members have subscribed to, kept after they
	// leave: a group whose consumers all died before a commit is still
	// behind on them, and its lag says so.
	topics []string

	// A group of Kafka clients (see clientassign.go): its members send
	// protocols and the leader member computes the assignment.
	protocolType string // "" for a lab group
	leader       string // member id of the leader, wire groups only
	synced       bool   // the leader's assignment for this generation arrived
}

// wire reports whether the group's members are Kafka clients.
func (g *group) wire() bool { return g.protocolType != "" }

type member struct {
	id, clientID  string
	seq           int
	topics        []string
	session       time.Duration
	lastHeartbeat time.Time
	assignment    []TopicPartition
	generation    int  // the generation its assignment belongs to
	joined        bool // rejoined in the rebalance in progress
	seeks         map[TopicPartition]int64

	protocols  []Protocol    // wire members: what they can be assigned by, preferred first
	rebalance  time.Duration // wire members: how long a rebalance may wait for them
	assignData []byte        // wire members: the leader's assignment for this member, as sent
}

// New returns a coordinator with no groups. partitions gives a topic's
// partition count, 0 when the topic does not exist.
func New(partitions func(topic string) int) *Coordinator {
	return &Coordinator{partitions: partitions, groups: map[string]*group{}}
}

func (c *Coordinator) group(id string) *group {
	g := c.groups[id]
	if g == nil {
		g = &group{id: id, state: Empty, members: map[string]*member{}, offsets: map[TopicPartition]Offset{}, nextSeq: 1}
		c.groups[id] = g
	}
	return g
}

// name is how texts refer to a member: its client id, which the lab shows.
func (m *member) name() string { return m.clientID }

func (g *group) sortedMembers() []*member {
	out := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].seq != out[j].seq {
			return out[i].seq < out[j].seq
		}
		return out[i].id < out[j].id
	})
	return out
}

// Group is a copy of one group's state, for display.
type Group struct {
	ID                string
	State             State
	Generation        int
	Strategy          Strategy
	Members           []Member // in assignment order
	Offsets           map[TopicPartition]Offset
	RebalanceReason   string    // while preparing
	RebalanceDeadline time.Time // while preparing
	// ProtocolType is "consumer" (or another Kafka protocol type) for a
	// group of Kafka clients, "" for a group of lab consumers; Leader is
	// then its leader member's id.
	ProtocolType string
	Leader       string
	// Topics are those the group's members have subscribed to, sorted,
	// including members that have left.
	Topics []string
}

// Member is a copy of one member.
type Member struct {
	ID             string
	ClientID       string
	Topics         []string
	SessionTimeout time.Duration
	LastHeartbeat  time.Time
	Generation     int
	Assignment     []TopicPartition
	Joined         bool // rejoined in the rebalance in progress
}

// Describe copies one group; ok is false for an unknown group.
func (c *Coordinator) Describe(groupID string) (Group, bool) {
	g := c.groups[groupID]
	if g == nil {
		return Group{}, false
	}
	out := Group{ID: g.id, State: g.state, Generation: g.generation, Strategy: g.strategy, Offsets: make(map[TopicPartition]Offset, len(g.offsets)),
		ProtocolType: g.protocolType, Leader: g.leader, Topics: slices.Clone(g.topics)}
	if g.state == PreparingRebalance {
		out.RebalanceReason, out.RebalanceDeadline = g.reason, g.deadline
	}
	for tp, o := range g.offsets {
		out.Offsets[tp] = o
	}
	for _, m := range g.sortedMembers() {
		out.Members = append(out.Members, Member{ID: m.id, ClientID: m.clientID, Topics: slices.Clone(m.topics), SessionTimeout: m.session,
			LastHeartbeat: m.lastHeartbeat, Generation: m.generation, Assignment: slices.Clone(m.assignment), Joined: m.joined})
	}
	return out, true
}

// Groups lists the group names, sorted.
func (c *Coordinator) Groups() []string {
	out := make([]string, 0, len(c.groups))
	for id := range c.groups {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// subscribe adds topics to those the group has read.
func (g *group) subscribe(topics []string) {
	for _, t := range topics {
		if i, found := slices.BinarySearch(g.topics, t); !found {
			g.topics = slices.Insert(g.topics, i, t)
		}
	}
}
