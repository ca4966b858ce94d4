package groupcoord

import (
	"errors"
	"reflect"
	"testing"
)

func wireJoin(t *testing.T, c *Coordinator, client, memberID string, protocols ...string) JoinResult {
	t.Helper()
	var ps []Protocol
	for _, p := range protocols {
		ps = append(ps, Protocol{Name: p, Metadata: []byte(client + ":" + p)})
	}
	r, _, err := c.Join(JoinRequest{Group: "billing", MemberID: memberID, ClientID: client, Topics: []string{"orders"}, SessionTimeout: session,
		ProtocolType: "consumer", Protocols: ps, RebalanceTimeout: 2 * session}, t0)
	if err != nil {
		t.Fatalf("join %s: %v", client, err)
	}
	return r
}

// The classic protocol: the coordinator picks a leader and a protocol
// every member supports, hands the leader everyone's metadata, and gives
// each member the part of the leader's assignment meant for it once the
// generation is persisted.
func TestClientAssignedGroup(t *testing.T) {
	c := newCoord()
	a := wireJoin(t, c, "kcat", "", "range", "roundrobin")
	a = status(t, c, a)
	if !a.Ready || a.Leader != a.MemberID || a.Protocol != "range" || len(a.Members) != 1 {
		t.Fatalf("first member's join = %+v; want it ready, leading, on range, seeing itself", a)
	}
	// A second member that only speaks roundrobin: the group moves to it.
	b := wireJoin(t, c, "py", "", "roundrobin")
	if b.Ready {
		t.Fatalf("second member answered before the first rejoined: %+v", b)
	}
	if _, err := c.Sync("billing", a.MemberID, a.Generation, nil, t0); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("sync during the rebalance: %v; want rebalance in progress", err)
	}
	a = status(t, c, wireJoin(t, c, "kcat", a.MemberID, "range", "roundrobin"))
	b = status(t, c, b)
	if !a.Ready || !b.Ready || a.Generation != 2 || b.Generation != 2 {
		t.Fatalf("joins after both joined: %+v / %+v; want both ready in generation 2", a, b)
	}
	if a.Protocol != "roundrobin" || a.Leader != a.MemberID || len(a.Members) != 2 || len(b.Members) != 0 {
		t.Fatalf("leader %q protocol %q, leader sees %d members, follower %d; want the old leader, roundrobin, 2 and 0", a.Leader, a.Protocol, len(a.Members), len(b.Members))
	}
	if got := string(a.Members[1].Metadata); got != "py:roundrobin" {
		t.Fatalf("the leader sees the follower's metadata as %q; want the roundrobin one it sent", got)
	}
	// The follower's sync waits for the leader's assignment.
	if r, err := c.Sync("billing", b.MemberID, 2, nil, t0); err != nil || r.Ready {
		t.Fatalf("follower's sync before the leader's = %+v, %v; want it waiting", r, err)
	}
	if _, err := c.Sync("billing", b.MemberID, 1, nil, t0); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("sync in an old generation: %v; want stale generation", err)
	}
	assign := map[string]SyncAssignment{
		a.MemberID: {Data: []byte("a-part"), Partitions: []TopicPartition{{"orders", 1}, {"orders", 0}}},
		b.MemberID: {Data: []byte("b-part"), Partitions: []TopicPartition{{"orders", 2}}},
	}
	if r, err := c.Sync("billing", a.MemberID, 2, assign, t0); err != nil || r.Ready {
		t.Fatalf("leader's sync before persisting = %+v, %v; want it waiting", r, err)
	}
	changes := persistAll(t, c)
	if len(changes) != 1 || changes[0].Kind != Rebalanced {
		t.Fatalf("persisting gave %v; want one rebalance", kinds(changes))
	}
	r, err := c.SyncStatus("billing", b.MemberID, 2)
	if err != nil || !r.Ready || string(r.Data) != "b-part" {
		t.Fatalf("follower's sync after persisting = %+v, %v; want b-part", r, err)
	}
	g, _ := c.Describe("billing")
	if g.State != Stable || g.ProtocolType != "consumer" || !reflect.DeepEqual(g.Members[0].Assignment, []TopicPartition{{"orders", 0}, {"orders", 1}}) {
		t.Fatalf("group = %+v; want stable, consumer, the leader on orders/0 and /1", g)
	}
	// Commits are fenced by member and generation, not by partition.
	if err := c.ValidateCommit("billing", b.MemberID, 2, map[TopicPartition]int64{{"orders", 0}: 5}); err != nil {
		t.Fatalf("commit by a current member: %v", err)
	}
	if err := c.ValidateCommit("billing", b.MemberID, 1, map[TopicPartition]int64{{"orders", 2}: 5}); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("commit from an old generation: %v; want stale generation", err)
	}
	// A lab consumer cannot join a group of Kafka clients.
	if _, _, err := c.Join(JoinRequest{Group: "billing", ClientID: "c1", Topics: []string{"orders"}, Strategy: Range, SessionTimeout: session}, t0); !errors.Is(err, ErrInconsistentStrategy) {
		t.Fatalf("a lab consumer joining a wire group: %v; want inconsistent strategy", err)
	}
	// A new coordinator rebuilds the group from the record it persisted.
	k, v := EncodeGroupMetadata(GroupMetadata{Group: "billing", Generation: 2, Strategy: "roundrobin", ProtocolType: "consumer", Leader: a.MemberID,
		Members: []MemberMetadata{{ID: b.MemberID, ClientID: "py", Seq: 2, AssignData: []byte("b-part")}}})
	rec, err := DecodeRecord(k, v)
	if err != nil {
		t.Fatal(err)
	}
	c2 := newCoord()
	c2.Load(rec)
	if r, err := c2.SyncStatus("billing", b.MemberID, 2); err != nil || string(r.Data) != "b-part" {
		t.Fatalf("after a reload, the follower's assignment = %+v, %v; want b-part", r, err)
	}
}

// Members with no protocol in common cannot share a group.
func TestClientAssignedGroupRefusesStrangers(t *testing.T) {
	c := newCoord()
	wireJoin(t, c, "kcat", "", "range")
	_, _, err := c.Join(JoinRequest{Group: "billing", ClientID: "py", SessionTimeout: session, ProtocolType: "consumer", Protocols: []Protocol{{Name: "sticky"}}}, t0)
	if !errors.Is(err, ErrInconsistentStrategy) {
		t.Fatalf("join with no common protocol: %v; want inconsistent strategy", err)
	}
	_, _, err = c.Join(JoinRequest{Group: "billing", ClientID: "py", SessionTimeout: session, ProtocolType: "connect", Protocols: []Protocol{{Name: "range"}}}, t0)
	if !errors.Is(err, ErrInconsistentStrategy) {
		t.Fatalf("join with another protocol type: %v; want inconsistent strategy", err)
	}
}

// A coordinator that takes over a group of Kafka clients from the records
// the old one persisted admits its members' rejoins and a new member, as
// Kafka's does: the members' protocols and rebalance timeouts come back
// with the group, and the next leader sees every member's metadata.
func TestClientGroupSurvivesItsCoordinator(t *testing.T) {
	old := newCoord()
	a := status(t, old, wireJoin(t, old, "sarama", "", "range", "roundrobin"))
	b := wireJoin(t, old, "kafka-go", "", "range")
	a = status(t, old, wireJoin(t, old, "sarama", a.MemberID, "range", "roundrobin"))
	b = status(t, old, b)
	if _, err := old.Sync("billing", a.MemberID, a.Generation, map[string]SyncAssignment{
		a.MemberID: {Data: []byte("a-part"), Partitions: []TopicPartition{{"orders", 0}, {"orders", 1}}},
		b.MemberID: {Data: []byte("b-part"), Partitions: []TopicPartition{{"orders", 2}, {"orders", 3}}},
	}, t0); err != nil {
		t.Fatal(err)
	}
	var log []Record
	for _, g := range old.Unpersisted() {
		md, _ := old.Metadata(g)
		k, v := EncodeGroupMetadata(md)
		r, err := DecodeRecord(k, v)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, r)
		old.Persisted(g, md.Generation)
	}
	if len(log) != 1 {
		t.Fatalf("%d metadata records persisted; want 1", len(log))
	}
	for _, m := range log[0].Metadata.Members {
		if len(m.Protocols) == 0 || m.RebalanceTimeout != 2*session {
			t.Fatalf("persisted member %s with protocols %v and rebalance timeout %v; want its protocols and %v", m.ClientID, m.Protocols, m.RebalanceTimeout, 2*session)
		}
	}

	c := newCoord()
	for _, r := range log {
		c.Load(r)
	}
	c.FinishLoad(t0)
	// A member of the loaded generation rejoins (its client saw the
	// coordinator change): it keeps its generation.
	rejoinB := func() JoinResult {
		t.Helper()
		r, _, err := c.Join(JoinRequest{Group: "billing", MemberID: b.MemberID, ClientID: "kafka-go", Topics: []string{"orders"}, SessionTimeout: session,
			ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte("kafka-go:range")}}, RebalanceTimeout: 2 * session}, t0)
		if err != nil {
			t.Fatalf("a loaded member's rejoin: %v", err)
		}
		return r
	}
	rejoinB()
	// A late member joins, and the group rebalances.
	late, _, err := c.Join(JoinRequest{Group: "billing", ClientID: "librdkafka", Topics: []string{"orders"}, SessionTimeout: session,
		ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte("librdkafka:range")}}, RebalanceTimeout: 2 * session}, t0)
	if err != nil {
		t.Fatalf("a late member's join after the coordinator moved: %v", err)
	}
	rejoinB()
	// The loaded leader rejoins too; the generation completes with all three.
	a2, _, err := c.Join(JoinRequest{Group: "billing", MemberID: a.MemberID, ClientID: "sarama", Topics: []string{"orders"}, SessionTimeout: session,
		ProtocolType: "consumer", Protocols: []Protocol{{Name: "range", Metadata: []byte("sarama:range")}, {Name: "roundrobin"}}, RebalanceTimeout: 2 * session}, t0)
	if err != nil {
		t.Fatalf("the loaded leader's rejoin: %v", err)
	}
	a2 = status(t, c, a2)
	if !a2.Ready || a2.Generation != 3 || a2.Protocol != "range" || len(a2.Members) != 3 {
		t.Fatalf("leader's join after the takeover = %+v; want generation 3 on range with 3 members", a2)
	}
	if late = status(t, c, late); !late.Ready || late.Generation != 3 {
		t.Fatalf("late member's join = %+v; want it in generation 3", late)
	}
	for _, m := range a2.Members {
		if len(m.Metadata) == 0 {
			t.Errorf("the leader sees member %s with no metadata", m.ID)
		}
	}
}
