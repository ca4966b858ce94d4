package groupcoord

// Members joining, heartbeating and leaving a group, sessions expiring,
// and the rebalance each of these starts and completes.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// JoinRequest asks to join a group, or to rejoin it during a rebalance.
type JoinRequest struct {
	Group          string
	MemberID       string // "" for a new member
	ClientID       string
	Topics         []string
	Strategy       Strategy
	SessionTimeout time.Duration

	// A Kafka client's join (see clientassign.go) names its protocol type
	// and the protocols it can be assigned by; Strategy is then unused and
	// Topics are only shown.
	ProtocolType     string
	Protocols        []Protocol
	RebalanceTimeout time.Duration
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

	// For a Kafka client's join: the generation's leader and protocol, and
	// for the leader alone, every member with the metadata it sent.
	Leader   string
	Protocol string
	Members  []JoinMember
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
	if req.SessionTimeout <= 0 {
		return JoinResult{}, nil, fmt.Errorf("%w: join %s: session timeout %v must be positive", ErrInvalid, req.Group, req.SessionTimeout)
	}
	wire := req.ProtocolType != ""
	var strategy Strategy
	if wire {
		if err := validateProtocols(req); err != nil {
			return JoinResult{}, nil, err
		}
	} else {
		if len(req.Topics) == 0 {
			return JoinResult{}, nil, fmt.Errorf("%w: join %s: %s subscribes to no topic", ErrInvalid, req.Group, req.ClientID)
		}
		for _, t := range req.Topics {
			if c.partitions(t) < 1 {
				return JoinResult{}, nil, fmt.Errorf("%w: join %s: topic %q does not exist", ErrInvalid, req.Group, t)
			}
		}
		var err error
		if strategy, err = ParseStrategy(string(req.Strategy)); err != nil {
			return JoinResult{}, nil, err
		}
	}
	g := c.groups[req.Group]
	if req.MemberID != "" && (g == nil || g.members[req.MemberID] == nil) {
		return JoinResult{}, nil, fmt.Errorf("%w: %w: %s (member %s) is not in group %s: its session expired, it left, or the coordinator moved before its join was recorded; join again as a new member",
			ErrFenced, ErrUnknownMember, req.ClientID, req.MemberID, req.Group)
	}
	g = c.group(req.Group)
	if err := g.admits(req, wire, strategy); err != nil {
		return JoinResult{}, nil, err
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
	} else {
		m.lastHeartbeat = now
		same := slices.Equal(m.topics, topics)
		if wire {
			same = same && protocolsEqual(m.protocols, req.Protocols) && m.id != g.leader
		}
		m.session = req.SessionTimeout
		if same && g.state == Stable {
			return c.result(g, m), nil, nil
		}
		if same && g.state == CompletingRebalance && m.generation == g.generation {
			return JoinResult{MemberID: m.id, After: g.generation - 1}, nil, nil
		}
		m.topics = topics
	}
	g.subscribe(topics)
	if wire {
		m.protocols, m.rebalance = slices.Clone(req.Protocols), req.RebalanceTimeout
		g.protocolType = req.ProtocolType
	} else if len(g.members) == 1 {
		g.strategy = strategy
	}
	if len(g.members) == 1 && !wire {
		g.protocolType = ""
	}
	if g.state != PreparingRebalance {
		changes = append(changes, g.prepare(now, fmt.Sprintf("%s joined", m.clientID)))
	}
	m.joined = true
	after := g.generation
	changes = append(changes, g.maybeComplete(c.partitions, now)...)
	return JoinResult{MemberID: m.id, After: after}, changes, nil
}

// admits says whether a join fits the group's members: lab consumers and
// Kafka clients do not share a group, and members must agree on how they
// are assigned.
func (g *group) admits(req JoinRequest, wire bool, strategy Strategy) error {
	others := len(g.members) > 1 || (len(g.members) == 1 && g.members[req.MemberID] == nil)
	if !others {
		return nil
	}
	switch {
	case wire && !g.wire():
		return fmt.Errorf("%w: %s is a Kafka client, but group %s is a group of lab consumers; use another group id", ErrInconsistentStrategy, req.ClientID, req.Group)
	case !wire && g.wire():
		return fmt.Errorf("%w: group %s is a group of Kafka clients; a lab consumer cannot join it, use another group name", ErrInconsistentStrategy, req.Group)
	case wire:
		if req.ProtocolType != g.protocolType {
			return fmt.Errorf("%w: %s joins group %s with protocol type %q, its members use %q", ErrInconsistentStrategy, req.ClientID, req.Group, req.ProtocolType, g.protocolType)
		}
		if g.commonProtocol(req) == "" {
			return fmt.Errorf("%w: %s offers %s, which group %s's members do not all support", ErrInconsistentStrategy, req.ClientID, protocolNames(req.Protocols), req.Group)
		}
	case g.strategy != strategy:
		return fmt.Errorf("%w: %s asks group %s for %s, but its members use %s", ErrInconsistentStrategy, req.ClientID, req.Group, strategy, g.strategy)
	}
	return nil
}

func newMemberID(clientID string) string {
	return fmt.Sprintf("%s-%06x", clientID, rand.Uint32()&0xffffff)
}

// result is a member's answer for the current generation.
func (c *Coordinator) result(g *group, m *member) JoinResult {
	r := JoinResult{MemberID: m.id, Ready: true, After: m.generation - 1, Generation: m.generation,
		Assignment: slices.Clone(m.assignment), Committed: map[TopicPartition]int64{}}
	if g.wire() {
		g.describeJoin(m, &r)
	}
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
	if m.generation > after && (g.persisted >= m.generation || g.wire()) {
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
		longest = max(longest, m.session, m.rebalance)
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
	if g.wire() {
		g.awaitLeader(now)
		return changes
	}
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
