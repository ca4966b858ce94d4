package groupcoord

// Groups of Kafka clients: Kafka's classic group protocol, in which the
// coordinator only gathers the members and the group's leader member
// computes the assignment.
//
//   - Each member joins with a protocol type ("consumer") and the
//     protocols it can be assigned by, preferred first, each with opaque
//     metadata (for consumers: the topics it subscribes to).
//   - When the rebalance completes, the coordinator picks the leader (the
//     old one if it rejoined, else the longest-standing member) and the
//     first of the leader's protocols that every member supports, and
//     answers every join; the leader's answer lists each member with its
//     metadata.
//   - The leader sends the assignment with its SyncGroup. Once the
//     generation's metadata, assignment included, is committed in
//     __consumer_offsets, every member's SyncGroup is answered with its
//     own part.
//
// Commits are fenced by member and generation, as Kafka fences them; which
// partitions a member owns is the clients' business.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Protocol is one way a Kafka client can be assigned: a name ("range",
// "cooperative-sticky") and metadata only the clients read.
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinMember is a member as the leader learns of it.
type JoinMember struct {
	ID       string
	ClientID string
	Metadata []byte // of the generation's protocol
}

// SyncAssignment is the leader's assignment for one member: the bytes the
// member gets back, and the partitions they name (decoded by the caller,
// for display and events).
type SyncAssignment struct {
	Data       []byte
	Partitions []TopicPartition
}

// SyncResult answers a SyncGroup. Until Ready, the caller persists the
// group's metadata and asks again.
type SyncResult struct {
	Ready bool
	Data  []byte
}

func validateProtocols(req JoinRequest) error {
	if len(req.Protocols) == 0 {
		return fmt.Errorf("%w: join %s: %s offers no protocol", ErrInvalid, req.Group, req.ClientID)
	}
	for _, p := range req.Protocols {
		if p.Name == "" {
			return fmt.Errorf("%w: join %s: %s offers a protocol with no name", ErrInvalid, req.Group, req.ClientID)
		}
	}
	return nil
}

func protocolsEqual(a, b []Protocol) bool {
	return slices.EqualFunc(a, b, func(x, y Protocol) bool { return x.Name == y.Name && bytes.Equal(x.Metadata, y.Metadata) })
}

func protocolNames(ps []Protocol) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func (m *member) supports(name string) bool {
	return slices.ContainsFunc(m.protocols, func(p Protocol) bool { return p.Name == name })
}

// commonProtocol is the first of req's protocols that every other member
// supports, or "".
func (g *group) commonProtocol(req JoinRequest) string {
	for _, p := range req.Protocols {
		ok := true
		for _, m := range g.members {
			if m.id != req.MemberID && !m.supports(p.Name) {
				ok = false
				break
			}
		}
		if ok {
			return p.Name
		}
	}
	return ""
}

// awaitLeader completes a wire group's rebalance as far as the coordinator
// can: it picks the leader and the protocol, and the generation waits for
// the leader's SyncGroup.
func (g *group) awaitLeader(now time.Time) {
	members := g.sortedMembers()
	if g.members[g.leader] == nil {
		g.leader = ""
		if len(members) > 0 {
			g.leader = members[0].id
		}
	}
	g.strategy = ""
	if l := g.members[g.leader]; l != nil {
		g.strategy = Strategy(g.commonProtocol(JoinRequest{MemberID: "", Protocols: l.protocols}))
	}
	for _, m := range members {
		m.assignment, m.assignData = nil, nil
		m.generation = g.generation
		m.joined = false
		m.lastHeartbeat = now
		m.seeks = nil
	}
	g.synced = len(members) == 0
	g.state = CompletingRebalance
}

// describeJoin fills in what a Kafka client's join answer carries.
func (g *group) describeJoin(m *member, r *JoinResult) {
	r.Leader, r.Protocol = g.leader, string(g.strategy)
	if m.id != g.leader {
		return
	}
	for _, o := range g.sortedMembers() {
		if o.generation != m.generation {
			continue
		}
		var md []byte
		for _, p := range o.protocols {
			if p.Name == r.Protocol {
				md = p.Metadata
			}
		}
		r.Members = append(r.Members, JoinMember{ID: o.id, ClientID: o.clientID, Metadata: md})
	}
}

// Sync handles a member's SyncGroup: the leader's carries the assignment.
// The answer is ready once the generation, with its assignment, is
// persisted.
func (c *Coordinator) Sync(groupID, memberID string, generation int, assignments map[string]SyncAssignment, now time.Time) (SyncResult, error) {
	g := c.groups[groupID]
	if g == nil || g.members[memberID] == nil {
		return SyncResult{}, fmt.Errorf("%w: %w: member %s is not in group %s (its session expired or it left); rejoin", ErrFenced, ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	m.lastHeartbeat = now
	if g.state == PreparingRebalance {
		return SyncResult{}, fmt.Errorf("%w: group %s (%s); rejoin", ErrRebalanceInProgress, groupID, g.reason)
	}
	if generation != g.generation || m.generation != g.generation {
		return SyncResult{}, fmt.Errorf("%w: %w: %s", ErrFenced, ErrStaleGeneration, staleText(m.clientID, groupID, generation, g.generation))
	}
	if memberID == g.leader && !g.synced && g.state == CompletingRebalance {
		for id, a := range assignments {
			if o := g.members[id]; o != nil && o.generation == g.generation {
				o.assignData = slices.Clone(a.Data)
				o.assignment = slices.Clone(a.Partitions)
				sortTPs(o.assignment)
			}
		}
		g.synced = true
	}
	return c.SyncStatus(groupID, memberID, generation)
}

// SyncStatus tells a waiting SyncGroup whether its generation's assignment
// is persisted.
func (c *Coordinator) SyncStatus(groupID, memberID string, generation int) (SyncResult, error) {
	g := c.groups[groupID]
	if g == nil || g.members[memberID] == nil {
		return SyncResult{}, fmt.Errorf("%w: %w: member %s was dropped from group %s while it waited for its assignment", ErrFenced, ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	switch {
	case g.state == PreparingRebalance:
		return SyncResult{}, fmt.Errorf("%w: group %s (%s); rejoin", ErrRebalanceInProgress, groupID, g.reason)
	case generation != g.generation:
		return SyncResult{}, fmt.Errorf("%w: %w: %s", ErrFenced, ErrStaleGeneration, staleText(m.clientID, groupID, generation, g.generation))
	case g.persisted >= generation:
		return SyncResult{Ready: true, Data: slices.Clone(m.assignData)}, nil
	}
	return SyncResult{}, nil
}
