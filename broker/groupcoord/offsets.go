package groupcoord

// A group's committed offsets: the checks a commit must pass, recording
// and reading them, and handing a member a position an admin set.

import (
	"fmt"
	"slices"
	"strings"
)

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
	if memberID == "" && generation < 0 && (g == nil || len(g.members) == 0) {
		return nil // a Kafka client committing for itself, outside any group membership
	}
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
	if g.wire() {
		return nil // the leader member assigned the partitions; Kafka fences by member and generation only
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
