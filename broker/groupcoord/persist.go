package groupcoord

// What the coordinator keeps in __consumer_offsets: the metadata of each
// new generation, which makes the group stable once committed, and the
// records a new coordinator loads to rebuild its groups.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Unpersisted lists the groups whose current generation's metadata is not
// yet committed, sorted.
func (c *Coordinator) Unpersisted() []string {
	var out []string
	for id, g := range c.groups {
		if g.generation > g.persisted && (!g.wire() || g.synced) {
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
	if g == nil || g.generation <= g.persisted || (g.wire() && !g.synced) {
		return GroupMetadata{}, false
	}
	md = GroupMetadata{Group: g.id, Generation: g.generation, Strategy: g.strategy, ProtocolType: g.protocolType, Leader: g.leader, Topics: slices.Clone(g.topics)}
	for _, m := range g.sortedMembers() {
		if m.generation != g.generation {
			continue // joined after this generation was assigned
		}
		md.Members = append(md.Members, MemberMetadata{ID: m.id, ClientID: m.clientID, Seq: m.seq, Topics: slices.Clone(m.topics),
			SessionTimeout: m.session, Assignment: slices.Clone(m.assignment), AssignData: slices.Clone(m.assignData),
			Protocols: cloneProtocols(m.protocols), RebalanceTimeout: m.rebalance})
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
		g.protocolType, g.leader, g.synced = md.ProtocolType, md.Leader, true
		g.topics = nil
		g.subscribe(md.Topics)
		g.members = map[string]*member{}
		for _, mm := range md.Members {
			g.members[mm.ID] = &member{id: mm.ID, clientID: mm.ClientID, seq: mm.Seq, topics: slices.Clone(mm.Topics), session: mm.SessionTimeout,
				assignment: slices.Clone(mm.Assignment), assignData: slices.Clone(mm.AssignData), generation: md.Generation,
				protocols: cloneProtocols(mm.Protocols), rebalance: mm.RebalanceTimeout}
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

// cloneProtocols copies a member's protocols and their metadata, so a
// record and the group it was taken from or loaded into share nothing.
func cloneProtocols(ps []Protocol) []Protocol {
	if ps == nil {
		return nil
	}
	out := make([]Protocol, len(ps))
	for i, p := range ps {
		out[i] = Protocol{Name: p.Name, Metadata: slices.Clone(p.Metadata)}
	}
	return out
}
