package kafkawire

import (
	"slices"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// Which group a fetch is for, from what the server's answers told it.
func TestAttributeFetches(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	orders0 := broker.TopicPartition{Topic: "orders", Partition: 0}
	orders1 := broker.TopicPartition{Topic: "orders", Partition: 1}
	newServer := func() *Server {
		return &Server{conns: map[*conn]struct{}{}, wm: map[memberKey]*wireMember{}, gens: map[string]int{}}
	}
	open := func(s *Server, node string) *conn {
		cn := &conn{s: s, node: node}
		s.conns[cn] = struct{}{}
		return cn
	}
	// member joins group in generation gen with client.id client and is
	// handed parts, through a coordinator connection of its own.
	member := func(s *Server, group, id, client string, gen int, parts ...broker.TopicPartition) memberKey {
		coord := open(s, "n3")
		s.memberJoined(coord, group, id, client, gen, 6*time.Second)
		m := s.wm[memberKey{group, id}]
		m.parts = map[broker.TopicPartition]bool{}
		for _, tp := range parts {
			m.parts[tp] = true
		}
		return m.key
	}
	groups := func(a attribution) []string { return a.groups }

	t.Run("the coordinator connection is its member's", func(t *testing.T) {
		s := newServer()
		k := member(s, "billing", "m1", "rdkafka", 1, orders0)
		member(s, "audit", "m2", "rdkafka", 1, orders0)
		var coord *conn
		for cn := range s.conns {
			if cn.owner == k {
				coord = cn
			}
		}
		if a := s.attribute(coord, "rdkafka", orders0); a.member != k {
			t.Errorf("a fetch on billing's coordinator connection went to %+v", a)
		}
	})

	t.Run("one candidate, and the connection keeps it", func(t *testing.T) {
		s := newServer()
		k := member(s, "billing", "m1", "rdkafka", 1, orders0, orders1)
		cn := open(s, "n1")
		if a := s.attribute(cn, "rdkafka", orders0); a.member != k || a.generation != 1 {
			t.Fatalf("got %+v; want billing's m1 in generation 1", a)
		}
		// A second group with the same client.id joins: the connection
		// stays billing's; a new one to the same node is audit's, since a
		// client fetches from a node on one connection.
		k2 := member(s, "audit", "m2", "rdkafka", 1, orders0, orders1)
		if a := s.attribute(cn, "rdkafka", orders1); a.member != k {
			t.Errorf("billing's connection went to %+v", a)
		}
		if a := s.attribute(open(s, "n1"), "rdkafka", orders0); a.member != k2 {
			t.Errorf("a new connection to n1 went to %+v; want audit's m2", a)
		}
		// On a node neither fetches from yet, the broker cannot tell.
		if a := s.attribute(open(s, "n2"), "rdkafka", orders0); !slices.Equal(groups(a), []string{"audit", "billing"}) || a.member != (memberKey{}) {
			t.Errorf("a new connection to n2 went to %+v; want ambiguous between audit and billing", a)
		}
	})

	t.Run("no candidate, no group", func(t *testing.T) {
		s := newServer()
		member(s, "billing", "m1", "rdkafka", 1, orders0)
		if a := s.attribute(open(s, "n1"), "rdkafka", orders1); len(a.groups) != 0 {
			t.Errorf("a fetch of a partition nobody was assigned went to %+v", a)
		}
		if a := s.attribute(open(s, "n1"), "kcat-reader", orders0); len(a.groups) != 0 {
			t.Errorf("a fetch by another client.id went to %+v", a)
		}
		// A member whose session lapsed, or one of an older generation, is
		// no candidate.
		s.wm[memberKey{"billing", "m1"}].seen = time.Now().Add(-time.Minute)
		if a := s.attribute(open(s, "n1"), "rdkafka", orders0); len(a.groups) != 0 {
			t.Errorf("a lapsed member got %+v", a)
		}
		s2 := newServer()
		member(s2, "billing", "old", "rdkafka", 1, orders0)
		k := member(s2, "billing", "new", "rdkafka", 2, orders0)
		if a := s2.attribute(open(s2, "n1"), "rdkafka", orders0); a.member != k {
			t.Errorf("got %+v; want generation 2's member", a)
		}
	})

	t.Run("a member not yet synced is a candidate", func(t *testing.T) {
		s := newServer()
		coord := open(s, "n3")
		s.memberJoined(coord, "billing", "m1", "rdkafka", 1, 6*time.Second)
		if a := s.attribute(open(s, "n1"), "rdkafka", orders0); a.member != (memberKey{"billing", "m1"}) {
			t.Errorf("got %+v", a)
		}
		s.memberSynced(coord, "billing", "m1", 1, nil) // an empty assignment
		if a := s.attribute(open(s, "n1"), "rdkafka", orders0); len(a.groups) != 0 {
			t.Errorf("a member assigned nothing got %+v", a)
		}
	})
}
