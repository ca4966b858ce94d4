package kafkawire

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// Which group a fetch is for. A fetch request names no group: a consumer
// joins its group on one connection (to the group's coordinator) and
// fetches on others (to each partition's leader), and many clients share
// one client.id (librdkafka's default is "rdkafka"). So the server keeps
// what its own answers told each member — its client.id, generation and
// assignment — and, per connection, which member it belongs to, and
// names a fetch's group only when one group fits:
//
//  1. a connection that carried a member's group requests (join, sync,
//     heartbeat, commit) is that member's;
//  2. otherwise the candidates are the live members of the latest
//     generation whose client.id is the fetch's and whose assignment
//     holds the partition (or who have not had their assignment yet);
//  3. a connection an earlier fetch was attributed to keeps that member
//     while it is a candidate;
//  4. a client holds one fetch connection to a node, so a candidate that
//     fetches on another open connection to the same node is not this
//     one.
//
// Candidates left in more than one group make the fetch ambiguous: it is
// reported with the groups it may be for, and counted for none. No
// candidate left: the fetch is no group's (a client reading partitions
// it chose, under a group member's client.id).

// wireMember is a group member as the server's answers made it.
type wireMember struct {
	key        memberKey
	client     string
	generation int
	parts      map[broker.TopicPartition]bool // its assignment; nil until its sync
	session    time.Duration
	seen       time.Time // its last request the coordinator accepted
}

type memberKey struct{ group, id string }

// memberGrace is how long past its session timeout a member the server
// has not heard from still counts as live: a coordinator on another node
// may be hearing its heartbeats.
const memberGrace = 3 * time.Second

// memberForget is how long past its session timeout a member the server
// has not heard from is kept at all.
const memberForget = time.Minute

// alive says whether m is live in its group's latest generation.
func (s *Server) alive(m *wireMember, now time.Time) bool {
	return m.generation >= s.gens[m.key.group] && now.Sub(m.seen) <= m.session+memberGrace
}

// memberJoined records a member the coordinator admitted to a new
// generation; its assignment comes with its sync.
func (s *Server) memberJoined(cn *conn, group, id, client string, generation int, session time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memberKey{group, id}
	now := time.Now()
	for mk, m := range s.wm {
		if now.Sub(m.seen) > m.session+memberForget {
			delete(s.wm, mk)
		}
	}
	s.wm[k] = &wireMember{key: k, client: client, generation: generation, session: session, seen: now}
	s.gens[group] = max(s.gens[group], generation)
	cn.owner = k
}

// memberSynced records the assignment the coordinator handed a member.
func (s *Server) memberSynced(cn *conn, group, id string, generation int, assignment []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memberKey{group, id}
	m := s.wm[k]
	if m == nil {
		return // joined through a node before this listener started
	}
	m.generation, m.seen = generation, time.Now()
	s.gens[group] = max(s.gens[group], generation)
	m.parts = map[broker.TopicPartition]bool{}
	var ca kmsg.ConsumerMemberAssignment
	if ca.ReadFrom(assignment) == nil {
		for _, t := range ca.Topics {
			for _, p := range t.Partitions {
				m.parts[broker.TopicPartition{Topic: t.Topic, Partition: int(p)}] = true
			}
		}
	}
	cn.owner = k
}

// memberSeen records a member's request the coordinator accepted
// (a heartbeat, a commit).
func (s *Server) memberSeen(cn *conn, group, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memberKey{group, id}
	if m := s.wm[k]; m != nil {
		m.seen = time.Now()
		cn.owner = k
	}
}

// memberLeft forgets a member that left its group.
func (s *Server) memberLeft(group, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.wm, memberKey{group, id})
}

// memberOf returns the member a connection carries group requests for,
// and its generation; ok is false when it carries none.
func (s *Server) memberOf(cn *conn) (k memberKey, generation int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.wm[cn.owner]; m != nil {
		return m.key, m.generation, true
	}
	return memberKey{}, 0, false
}

// attribution is the group (and member, when known) a fetch is for, or
// the groups it may be for.
type attribution struct {
	member     memberKey
	generation int
	groups     []string // more than one: ambiguous
}

// attribute names the group a fetch of tp by client on cn is for, as the
// package comment above says.
func (s *Server) attribute(cn *conn, client string, tp broker.TopicPartition) attribution {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	found := func(m *wireMember) attribution {
		return attribution{member: m.key, generation: m.generation, groups: []string{m.key.group}}
	}
	if m := s.wm[cn.owner]; m != nil {
		return found(m)
	}
	var cands []*wireMember
	for _, m := range s.wm {
		if m.client == client && (m.parts == nil || m.parts[tp]) && s.alive(m, now) {
			cands = append(cands, m)
		}
	}
	if m := s.wm[cn.fetcher]; m != nil && slices.Contains(cands, m) {
		return found(m)
	}
	if len(cands) > 1 {
		cands = slices.DeleteFunc(cands, func(m *wireMember) bool {
			for other := range s.conns {
				if other != cn && other.node == cn.node && other.fetcher == m.key {
					return true
				}
			}
			return false
		})
	}
	if len(cands) == 0 {
		return attribution{}
	}
	groups := groupsOf(cands)
	if len(groups) > 1 {
		return attribution{groups: groups}
	}
	best := cands[0]
	for _, m := range cands[1:] {
		if m.generation > best.generation || m.generation == best.generation && m.key.id < best.key.id {
			best = m
		}
	}
	if len(cands) == 1 {
		cn.fetcher = best.key
	}
	return found(best)
}

func groupsOf(ms []*wireMember) []string {
	var out []string
	for _, m := range ms {
		if !slices.Contains(out, m.key.group) {
			out = append(out, m.key.group)
		}
	}
	slices.Sort(out)
	return out
}
