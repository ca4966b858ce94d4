package groupcoord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
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
}

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

// JoinRequest asks to join a group, or to rejoin it during a rebalance.
type JoinRequest struct {
	Group          string
	MemberID       string // "" for a new member
	ClientID       string
	Topics         []string
	Strategy       Strategy
	SessionTimeout time.Duration
}

// JoinResult answers a join. Until Ready, the caller waits and asks
// JoinStatus with After.
type JoinResult struct {
	MemberID   string
	Ready      bool
	After      int // the join is answered by a generation newer than this
	Generation int
	Assignment []TopicPartition
	Committed  map[TopicPartition]int64 // the group's committed offsets for Assignment; -1 when none
}

// Join adds a member (MemberID "") or rejoins one. A known member that
// rejoins a stable group without changing its subscription gets its current
// assignment at once; anything else starts or joins a rebalance, and the
// answer comes once the rebalance completes and is persisted.
func (c *Coordinator) Join(req JoinRequest, now time.Time) (JoinResult, []Change, error) {
	if err := ValidateGroupName(req.Group); err != nil {
		return JoinResult{}, nil, err
	}
	if req.ClientID == "" {
		return JoinResult{}, nil, fmt.Errorf("%w: join %s: a member needs a client id", ErrInvalid, req.Group)
	}
	if len(req.Topics) == 0 {
		return JoinResult{}, nil, fmt.Errorf("%w: join %s: %s subscribes to no topic", ErrInvalid, req.Group, req.ClientID)
	}
	for _, t := range req.Topics {
		if c.partitions(t) < 1 {
			return JoinResult{}, nil, fmt.Errorf("%w: join %s: topic %q does not exist", ErrInvalid, req.Group, t)
		}
	}
	if req.SessionTimeout <= 0 {
		return JoinResult{}, nil, fmt.Errorf("%w: join %s: session timeout %v must be positive", ErrInvalid, req.Group, req.SessionTimeout)
	}
	strategy, err := ParseStrategy(string(req.Strategy))
	if err != nil {
		return JoinResult{}, nil, err
	}
	g := c.groups[req.Group]
	if req.MemberID != "" && (g == nil || g.members[req.MemberID] == nil) {
		return JoinResult{}, nil, fmt.Errorf("%w: %w: %s (member %s) is not in group %s: its session expired, it left, or the coordinator moved before its join was recorded; join again as a new member",
			ErrFenced, ErrUnknownMember, req.ClientID, req.MemberID, req.Group)
	}
	g = c.group(req.Group)
	if len(g.members) > 0 && g.strategy != strategy {
		if req.MemberID == "" || len(g.members) > 1 {
			return JoinResult{}, nil, fmt.Errorf("%w: %s asks group %s for %s, but its members use %s", ErrInconsistentStrategy, req.ClientID, req.Group, strategy, g.strategy)
		}
	}
	var changes []Change
	topics := slices.Clone(req.Topics)
	sort.Strings(topics)
	topics = slices.Compact(topics)
	m := g.members[req.MemberID]
	if m == nil {
		m = &member{id: newMemberID(req.ClientID), clientID: req.ClientID, seq: g.nextSeq, topics: topics, session: req.SessionTimeout, lastHeartbeat: now}
		g.nextSeq++
		g.members[m.id] = m
		changes = append(changes, Change{Kind: MemberJoined, Group: g.id, Member: m.id, ClientID: m.clientID, Generation: g.generation,
			Text: fmt.Sprintf("%s joined group %s as member %s", m.clientID, g.id, m.id)})
		if len(g.members) == 1 {
			g.strategy = strategy
		}
	} else {
		m.lastHeartbeat = now
		same := slices.Equal(m.topics, topics)
		m.session = req.SessionTimeout
		if same && g.state == Stable {
			return c.result(g, m), nil, nil
		}
		if same && g.state == CompletingRebalance && m.generation == g.generation {
			return JoinResult{MemberID: m.id, After: g.generation - 1}, nil, nil
		}
		if !same {
			m.topics = topics
		}
		if len(g.members) == 1 {
			g.strategy = strategy
		}
	}
	if g.state != PreparingRebalance {
		changes = append(changes, g.prepare(now, fmt.Sprintf("%s joined", m.clientID)))
	}
	m.joined = true
	after := g.generation
	changes = append(changes, g.maybeComplete(c.partitions, now)...)
	return JoinResult{MemberID: m.id, After: after}, changes, nil
}

func newMemberID(clientID string) string {
	return fmt.Sprintf("%s-%06x", clientID, rand.Uint32()&0xffffff)
}

// result is a member's answer for the current generation.
func (c *Coordinator) result(g *group, m *member) JoinResult {
	r := JoinResult{MemberID: m.id, Ready: true, After: m.generation - 1, Generation: m.generation,
		Assignment: slices.Clone(m.assignment), Committed: map[TopicPartition]int64{}}
	for _, tp := range m.assignment {
		r.Committed[tp] = -1
		if o, ok := g.offsets[tp]; ok {
			r.Committed[tp] = o.Offset
		}
	}
	return r
}

// JoinStatus tells a waiting join whether a generation newer than after,
// with this member in it, has been persisted.
func (c *Coordinator) JoinStatus(groupID, memberID string, after int) (JoinResult, error) {
	g := c.groups[groupID]
	if g == nil || g.members[memberID] == nil {
		return JoinResult{}, fmt.Errorf("%w: %w: member %s was dropped from group %s while it waited to join", ErrFenced, ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	if m.generation > after && g.persisted >= m.generation {
		return c.result(g, m), nil
	}
	return JoinResult{MemberID: m.id, After: after}, nil
}

// prepare starts a rebalance: every member must rejoin before the deadline,
// the longest session timeout among them from now.
func (g *group) prepare(now time.Time, reason string) Change {
	g.state = PreparingRebalance
	g.reason = reason
	var longest time.Duration
	for _, m := range g.members {
		m.joined = false
		longest = max(longest, m.session)
	}
	g.deadline = now.Add(longest)
	return Change{Kind: RebalanceStarted, Group: g.id, Generation: g.generation,
		Text: fmt.Sprintf("group %s rebalances (%s): every member must rejoin; generation %d ends", g.id, reason, g.generation)}
}

// maybeComplete ends the rebalance once every member rejoined or the
// deadline passed: stragglers are dropped, the generation goes up and the
// partitions are assigned. The group then waits for its metadata to be
// persisted.
func (g *group) maybeComplete(partitions func(string) int, now time.Time) []Change {
	if g.state != PreparingRebalance {
		return nil
	}
	all := true
	for _, m := range g.members {
		all = all && m.joined
	}
	if !all && now.Before(g.deadline) {
		return nil
	}
	var changes []Change
	for _, m := range g.sortedMembers() {
		if !m.joined {
			delete(g.members, m.id)
			changes = append(changes, Change{Kind: SessionExpired, Group: g.id, Member: m.id, ClientID: m.clientID, Generation: g.generation,
				Text: fmt.Sprintf("%s (member %s) did not rejoin group %s within the rebalance timeout; it is dropped", m.name(), m.id, g.id)})
		}
	}
	g.generation++
	var am []AssignMember
	for _, m := range g.members {
		am = append(am, AssignMember{ID: m.id, Seq: m.seq, Topics: m.topics})
	}
	assignment := Assign(g.strategy, am, partitions)
	for _, m := range g.members {
		m.assignment = assignment[m.id]
		m.generation = g.generation
		m.joined = false
		m.lastHeartbeat = now
		m.seeks = nil
	}
	g.state = CompletingRebalance
	return changes
}

// HeartbeatResult answers a heartbeat in a stable group.
type HeartbeatResult struct {
	// Seeks are positions an admin set for the member's partitions
	// (Coordinator.RequestSeek) since its last heartbeat.
	Seeks map[TopicPartition]int64
}

// Heartbeat keeps a member's session alive. During a rebalance it answers
// ErrRebalanceInProgress: the member must rejoin.
func (c *Coordinator) Heartbeat(groupID, memberID string, generation int, now time.Time) (HeartbeatResult, error) {
	g := c.groups[groupID]
	if g == nil || g.members[memberID] == nil {
		return HeartbeatResult{}, fmt.Errorf("%w: %w: member %s is not in group %s (its session expired or it left); rejoin", ErrFenced, ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	m.lastHeartbeat = now
	if g.state == PreparingRebalance {
		return HeartbeatResult{}, fmt.Errorf("%w: group %s (%s); rejoin", ErrRebalanceInProgress, groupID, g.reason)
	}
	if generation != m.generation || generation != g.generation {
		return HeartbeatResult{}, fmt.Errorf("%w: %w: %s", ErrFenced, ErrStaleGeneration, staleText(m.clientID, groupID, generation, g.generation))
	}
	res := HeartbeatResult{Seeks: m.seeks}
	m.seeks = nil
	return res, nil
}

func staleText(client, group string, memberGen, groupGen int) string {
	return fmt.Sprintf("member %s of group %s is in generation %d, the group is in %d: it was rebalanced away; rejoin", client, group, memberGen, groupGen)
}

// Leave removes a member at its request; the others rebalance.
func (c *Coordinator) Leave(groupID, memberID string, now time.Time) ([]Change, error) {
	g := c.groups[groupID]
	if g == nil || g.members[memberID] == nil {
		return nil, fmt.Errorf("%w: %w: member %s is not in group %s", ErrFenced, ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	delete(g.members, memberID)
	changes := []Change{{Kind: MemberLeft, Group: g.id, Member: m.id, ClientID: m.clientID, Generation: g.generation,
		Text: fmt.Sprintf("%s (member %s) left group %s", m.name(), m.id, g.id)}}
	if g.state != PreparingRebalance {
		changes = append(changes, g.prepare(now, fmt.Sprintf("%s left", m.name())))
	}
	return append(changes, g.maybeComplete(c.partitions, now)...), nil
}

// Tick expires members whose session ran out and ends rebalances whose
// deadline passed. A member that rejoined in the rebalance in progress
// waits for its answer and is not expired meanwhile.
func (c *Coordinator) Tick(now time.Time) []Change {
	var changes []Change
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := c.groups[id]
		var expired []string
		for _, m := range g.sortedMembers() {
			if g.state == PreparingRebalance && m.joined {
				continue
			}
			if idle := now.Sub(m.lastHeartbeat); idle > m.session {
				delete(g.members, m.id)
				expired = append(expired, m.name())
				changes = append(changes, Change{Kind: SessionExpired, Group: g.id, Member: m.id, ClientID: m.clientID, Generation: g.generation,
					Text: fmt.Sprintf("%s (member %s) sent no heartbeat for %v, beyond its session timeout of %v: group %s drops it", m.name(), m.id, idle.Round(time.Millisecond), m.session, g.id)})
			}
		}
		if len(expired) > 0 && g.state != PreparingRebalance {
			changes = append(changes, g.prepare(now, fmt.Sprintf("the session of %s expired", strings.Join(expired, ", "))))
		}
		changes = append(changes, g.maybeComplete(c.partitions, now)...)
	}
	return changes
}

// Unpersisted lists the groups whose current generation's metadata is not
// yet committed, sorted.
func (c *Coordinator) Unpersisted() []string {
	var out []string
	for id, g := range c.groups {
		if g.generation > g.persisted {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Metadata is the record to persist for the group's current generation:
// its members and their assignment. ok is false when it is already
// persisted.
func (c *Coordinator) Metadata(groupID string) (md GroupMetadata, ok bool) {
	g := c.groups[groupID]
	if g == nil || g.generation <= g.persisted {
		return GroupMetadata{}, false
	}
	md = GroupMetadata{Group: g.id, Generation: g.generation, Strategy: g.strategy}
	for _, m := range g.sortedMembers() {
		if m.generation != g.generation {
			continue // joined after this generation was assigned
		}
		md.Members = append(md.Members, MemberMetadata{ID: m.id, ClientID: m.clientID, Seq: m.seq, Topics: slices.Clone(m.topics),
			SessionTimeout: m.session, Assignment: slices.Clone(m.assignment)})
	}
	return md, true
}

// Persisted records that generation's metadata is committed: the group is
// stable (or empty) and the waiting joins can be answered.
func (c *Coordinator) Persisted(groupID string, generation int) []Change {
	g := c.groups[groupID]
	if g == nil || generation <= g.persisted {
		return nil
	}
	g.persisted = generation
	if g.state == CompletingRebalance && g.generation == generation {
		g.state = Stable
		if len(g.members) == 0 {
			g.state = Empty
		}
	}
	var parts []string
	for _, m := range g.sortedMembers() {
		if m.generation != generation {
			continue
		}
		if len(m.assignment) == 0 {
			parts = append(parts, m.name()+" idle")
			continue
		}
		var tps []string
		for _, tp := range m.assignment {
			tps = append(tps, tp.String())
		}
		parts = append(parts, m.name()+" → "+strings.Join(tps, ","))
	}
	text := fmt.Sprintf("group %s is in generation %d: %s", g.id, generation, strings.Join(parts, "; "))
	if len(parts) == 0 {
		text = fmt.Sprintf("group %s is in generation %d with no members", g.id, generation)
	}
	return []Change{{Kind: Rebalanced, Group: g.id, Generation: generation, Text: text}}
}

// ValidateCommit checks that a member may commit offsets for these
// partitions: it is in the group, in the group's current generation, and
// owns every partition. Commits are allowed while the group prepares a
// rebalance, so a member can commit what it processed before it rejoins.
func (c *Coordinator) ValidateCommit(groupID, memberID string, generation int, offsets map[TopicPartition]int64) error {
	for tp, off := range offsets {
		if off < 0 {
			return fmt.Errorf("%w: commit %s %s: offset %d is negative", ErrInvalid, groupID, tp, off)
		}
	}
	g := c.groups[groupID]
	if g == nil {
		return fmt.Errorf("%w: %w: group %s has no members here; member %s must rejoin", ErrFenced, ErrUnknownMember, groupID, memberID)
	}
	m := g.members[memberID]
	client := memberID
	if m != nil {
		client = m.clientID
	} else if i := strings.LastIndexByte(memberID, '-'); i > 0 {
		client = memberID[:i]
	}
	if generation != g.generation {
		return fmt.Errorf("%w: %w: %s", ErrFenced, ErrStaleGeneration, staleText(client, groupID, generation, g.generation))
	}
	if m == nil {
		return fmt.Errorf("%w: %w: %s (member %s) is no longer in group %s: its session expired or it left; rejoin", ErrFenced, ErrUnknownMember, client, memberID, groupID)
	}
	if g.state == CompletingRebalance || m.generation != generation {
		return fmt.Errorf("%w: %w: %s", ErrFenced, ErrStaleGeneration, staleText(client, groupID, m.generation, g.generation))
	}
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	for _, tp := range tps {
		if !slices.Contains(m.assignment, tp) {
			owner := "no member"
			for _, o := range g.sortedMembers() {
				if slices.Contains(o.assignment, tp) {
					owner = o.clientID
				}
			}
			return fmt.Errorf("%w: %w: %s is not assigned to %s in generation %d of group %s (it belongs to %s)", ErrFenced, ErrNotAssigned, tp, client, g.generation, groupID, owner)
		}
	}
	return nil
}

// ApplyOffset records a committed offset (after its record is committed, or
// while loading).
func (c *Coordinator) ApplyOffset(groupID string, tp TopicPartition, o Offset) {
	c.group(groupID).offsets[tp] = o
}

// Committed returns the group's committed offsets for tps, -1 for none.
func (c *Coordinator) Committed(groupID string, tps []TopicPartition) map[TopicPartition]int64 {
	out := make(map[TopicPartition]int64, len(tps))
	g := c.groups[groupID]
	for _, tp := range tps {
		out[tp] = -1
		if g == nil {
			continue
		}
		if o, ok := g.offsets[tp]; ok {
			out[tp] = o.Offset
		}
	}
	return out
}

// RequestSeek hands a new position for tp to the member that owns it, with
// its next heartbeat. It returns that member's client id, or "" when no
// member owns tp.
func (c *Coordinator) RequestSeek(groupID string, tp TopicPartition, offset int64) string {
	g := c.groups[groupID]
	if g == nil {
		return ""
	}
	for _, m := range g.members {
		if m.generation == g.generation && slices.Contains(m.assignment, tp) {
			if m.seeks == nil {
				m.seeks = map[TopicPartition]int64{}
			}
			m.seeks[tp] = offset
			return m.clientID
		}
	}
	return ""
}

// Load applies one committed record while a new coordinator rebuilds its
// groups from __consumer_offsets; records must come in log order.
func (c *Coordinator) Load(r Record) {
	switch r.Kind {
	case OffsetCommitRecord:
		c.ApplyOffset(r.Group, r.Partition, r.Offset)
	case GroupMetadataRecord:
		g := c.group(r.Group)
		md := r.Metadata
		g.generation, g.persisted, g.strategy = md.Generation, md.Generation, md.Strategy
		g.members = map[string]*member{}
		for _, mm := range md.Members {
			g.members[mm.ID] = &member{id: mm.ID, clientID: mm.ClientID, seq: mm.Seq, topics: slices.Clone(mm.Topics), session: mm.SessionTimeout,
				assignment: slices.Clone(mm.Assignment), generation: md.Generation}
			g.nextSeq = max(g.nextSeq, mm.Seq+1)
		}
		g.state = Stable
		if len(g.members) == 0 {
			g.state = Empty
		}
	}
}

// FinishLoad starts every loaded member's session afresh: the members did
// not know the coordinator was away.
func (c *Coordinator) FinishLoad(now time.Time) {
	for _, g := range c.groups {
		for _, m := range g.members {
			m.lastHeartbeat = now
		}
	}
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
	out := Group{ID: g.id, State: g.state, Generation: g.generation, Strategy: g.strategy, Offsets: make(map[TopicPartition]Offset, len(g.offsets))}
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
