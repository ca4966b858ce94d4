package groupcoord

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const session = time.Second

func newCoord() *Coordinator { return New(counts(map[string]int{"orders": 4, "clicks": 1})) }

// persistAll plays the broker's part: write every pending metadata record
// (here: pretend it committed) and report it persisted.
func persistAll(t *testing.T, c *Coordinator) []Change {
	t.Helper()
	var out []Change
	for _, g := range c.Unpersisted() {
		md, ok := c.Metadata(g)
		if !ok {
			t.Fatalf("group %s listed as unpersisted but has no metadata", g)
		}
		out = append(out, c.Persisted(g, md.Generation)...)
	}
	return out
}

func join(t *testing.T, c *Coordinator, client, memberID string, now time.Time) JoinResult {
	t.Helper()
	r, _, err := c.Join(JoinRequest{Group: "billing", MemberID: memberID, ClientID: client, Topics: []string{"orders"}, Strategy: Range, SessionTimeout: session}, now)
	if err != nil {
		t.Fatalf("join %s: %v", client, err)
	}
	return r
}

func status(t *testing.T, c *Coordinator, r JoinResult) JoinResult {
	t.Helper()
	if r.Ready {
		return r
	}
	s, err := c.JoinStatus("billing", r.MemberID, r.After)
	if err != nil {
		t.Fatalf("join status of %s: %v", r.MemberID, err)
	}
	return s
}

func kinds(cs []Change) []ChangeKind {
	var out []ChangeKind
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

// The eager protocol: a new member makes every member rejoin; the
// generation goes up once the last one has; the answer waits for the
// metadata to be persisted.
func TestJoinRebalanceGeneration(t *testing.T) {
	c := newCoord()
	a := join(t, c, "c1", "", t0)
	if a.Ready {
		t.Fatal("the first join is answered before its generation is persisted")
	}
	if s := status(t, c, a); s.Ready {
		t.Fatal("ready before persisted")
	}
	ch := persistAll(t, c)
	if !reflect.DeepEqual(kinds(ch), []ChangeKind{Rebalanced}) || ch[0].Generation != 1 {
		t.Fatalf("changes after persisting: %+v", ch)
	}
	a = status(t, c, a)
	if !a.Ready || a.Generation != 1 || len(a.Assignment) != 4 {
		t.Fatalf("c1 after generation 1: %+v", a)
	}
	if a.Committed[TopicPartition{"orders", 0}] != -1 {
		t.Errorf("no commit yet should read -1: %v", a.Committed)
	}

	// c2 joins: c1 must rejoin.
	b, changes, err := c.Join(JoinRequest{Group: "billing", ClientID: "c2", Topics: []string{"orders"}, SessionTimeout: session}, t0.Add(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kinds(changes), []ChangeKind{MemberJoined, RebalanceStarted}) {
		t.Errorf("changes: %v", kinds(changes))
	}
	if _, err := c.Heartbeat("billing", a.MemberID, 1, t0.Add(20*time.Millisecond)); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("c1's heartbeat during the rebalance: %v", err)
	}
	// c1 may still commit what it processed in generation 1.
	if err := c.ValidateCommit("billing", a.MemberID, 1, map[TopicPartition]int64{{"orders", 3}: 7}); err != nil {
		t.Fatalf("commit before rejoining: %v", err)
	}
	a = join(t, c, "c1", a.MemberID, t0.Add(30*time.Millisecond))
	if d, _ := c.Describe("billing"); d.State != CompletingRebalance || d.Generation != 2 {
		t.Fatalf("after both joined: %s generation %d", d.State, d.Generation)
	}
	persistAll(t, c)
	a, b = status(t, c, a), status(t, c, b)
	if !a.Ready || !b.Ready || a.Generation != 2 || b.Generation != 2 {
		t.Fatalf("generation 2: %+v %+v", a, b)
	}
	if !reflect.DeepEqual(a.Assignment, tps("orders/0", "orders/1")) || !reflect.DeepEqual(b.Assignment, tps("orders/2", "orders/3")) {
		t.Errorf("range over join order: c1 %v, c2 %v", a.Assignment, b.Assignment)
	}
	// A rejoin of a stable group with the same subscription changes nothing.
	again := join(t, c, "c1", a.MemberID, t0.Add(40*time.Millisecond))
	if !again.Ready || again.Generation != 2 {
		t.Errorf("rejoin of a stable group: %+v", again)
	}
}

func TestSessionExpiryAndLeave(t *testing.T) {
	c := newCoord()
	a := join(t, c, "c1", "", t0)
	persistAll(t, c)
	b := join(t, c, "c2", "", t0)
	a = join(t, c, "c1", a.MemberID, t0)
	persistAll(t, c)
	a, b = status(t, c, a), status(t, c, b)

	// c1 keeps heartbeating, c2 goes silent.
	for ms := 300; ms <= 1200; ms += 300 {
		if _, err := c.Heartbeat("billing", a.MemberID, 2, t0.Add(time.Duration(ms)*time.Millisecond)); err != nil && !errors.Is(err, ErrRebalanceInProgress) {
			t.Fatal(err)
		}
		c.Tick(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	d, _ := c.Describe("billing")
	if len(d.Members) != 1 || d.Members[0].ClientID != "c1" || d.State != PreparingRebalance {
		t.Fatalf("after c2's session ran out: %+v", d)
	}
	if _, err := c.Heartbeat("billing", b.MemberID, 2, t0.Add(1300*time.Millisecond)); !errors.Is(err, ErrUnknownMember) || !errors.Is(err, ErrFenced) {
		t.Errorf("expired member's heartbeat: %v", err)
	}
	a = join(t, c, "c1", a.MemberID, t0.Add(1300*time.Millisecond))
	persistAll(t, c)
	a = status(t, c, a)
	if a.Generation != 3 || len(a.Assignment) != 4 {
		t.Fatalf("c1 alone in generation 3: %+v", a)
	}
	// The last member leaves: the group is empty, a generation later.
	ch, err := c.Leave("billing", a.MemberID, t0.Add(1400*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if kinds(ch)[0] != MemberLeft {
		t.Errorf("leave changes: %v", kinds(ch))
	}
	persistAll(t, c)
	if d, _ := c.Describe("billing"); d.State != Empty || d.Generation != 4 || len(d.Members) != 0 {
		t.Errorf("after the last member left: %s generation %d, %d members", d.State, d.Generation, len(d.Members))
	}
}

// A member that neither heartbeats nor rejoins is dropped when the
// rebalance deadline passes, and the others go on without it.
func TestRebalanceDeadlineDropsStragglers(t *testing.T) {
	c := newCoord()
	a := join(t, c, "c1", "", t0)
	persistAll(t, c)
	// c1 heartbeats (keeping its session) but never rejoins.
	b := join(t, c, "c2", "", t0.Add(100*time.Millisecond))
	for ms := 200; ms < 1100; ms += 200 {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		c.Heartbeat("billing", a.MemberID, 1, now)
		if ch := c.Tick(now); len(ch) != 0 {
			t.Fatalf("at %dms, before the deadline: %+v", ms, ch)
		}
	}
	ch := c.Tick(t0.Add(1100 * time.Millisecond))
	if len(ch) != 1 || ch[0].Kind != SessionExpired || ch[0].ClientID != "c1" || !strings.Contains(ch[0].Text, "rebalance timeout") {
		t.Fatalf("at the deadline: %+v", ch)
	}
	persistAll(t, c)
	b = status(t, c, b)
	if !b.Ready || b.Generation != 2 || len(b.Assignment) != 4 {
		t.Fatalf("c2 after the deadline: %+v", b)
	}
}

// Commits are fenced by generation, membership and assignment, with
// messages that say what happened.
func TestCommitValidation(t *testing.T) {
	c := newCoord()
	a := join(t, c, "c3", "", t0)
	persistAll(t, c)
	a = status(t, c, a)
	b := join(t, c, "c4", "", t0)
	join(t, c, "c3", a.MemberID, t0)
	persistAll(t, c)
	b = status(t, c, b)

	// c3 from generation 1 is a zombie now.
	err := c.ValidateCommit("billing", a.MemberID, 1, map[TopicPartition]int64{{"orders", 0}: 5})
	if !errors.Is(err, ErrStaleGeneration) || !errors.Is(err, ErrFenced) {
		t.Fatalf("stale commit: %v", err)
	}
	if want := "member c3 of group billing is in generation 1, the group is in 2: it was rebalanced away; rejoin"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q should say %q", err, want)
	}
	err = c.ValidateCommit("billing", b.MemberID, 2, map[TopicPartition]int64{{"orders", 0}: 5})
	if !errors.Is(err, ErrNotAssigned) || !strings.Contains(err.Error(), "belongs to c3") {
		t.Errorf("commit of another member's partition: %v", err)
	}
	if err := c.ValidateCommit("billing", b.MemberID, 2, map[TopicPartition]int64{{"orders", 2}: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative offset: %v", err)
	}
	if err := c.ValidateCommit("billing", b.MemberID, 2, map[TopicPartition]int64{{"orders", 2}: 5, {"orders", 3}: 9}); err != nil {
		t.Errorf("valid commit: %v", err)
	}
	if err := c.ValidateCommit("billing", "c9-000000", 2, map[TopicPartition]int64{{"orders", 2}: 5}); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("unknown member: %v", err)
	}
	if err := c.ValidateCommit("nobody", "c9-000000", 0, map[TopicPartition]int64{{"orders", 2}: 5}); !errors.Is(err, ErrFenced) {
		t.Errorf("unknown group: %v", err)
	}
}

func TestJoinValidation(t *testing.T) {
	c := newCoord()
	bad := []JoinRequest{
		{Group: "a b", ClientID: "c1", Topics: []string{"orders"}, SessionTimeout: session},
		{Group: "g", Topics: []string{"orders"}, SessionTimeout: session},
		{Group: "g", ClientID: "c1", SessionTimeout: session},
		{Group: "g", ClientID: "c1", Topics: []string{"nope"}, SessionTimeout: session},
		{Group: "g", ClientID: "c1", Topics: []string{"orders"}},
		{Group: "g", ClientID: "c1", Topics: []string{"orders"}, SessionTimeout: session, Strategy: "sticky"},
	}
	for i, r := range bad {
		if _, _, err := c.Join(r, t0); !errors.Is(err, ErrInvalid) {
			t.Errorf("bad join %d: %v", i, err)
		}
	}
	if _, _, err := c.Join(JoinRequest{Group: "g", MemberID: "c1-123456", ClientID: "c1", Topics: []string{"orders"}, SessionTimeout: session}, t0); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("rejoin with an unknown member id: %v", err)
	}
	join(t, c, "c1", "", t0)
	_, _, err := c.Join(JoinRequest{Group: "billing", ClientID: "c2", Topics: []string{"orders"}, Strategy: RoundRobin, SessionTimeout: session}, t0)
	if !errors.Is(err, ErrInconsistentStrategy) {
		t.Errorf("mixed strategies: %v", err)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	o := Offset{Offset: 42, Generation: 5, Member: "c3-00ab12", Time: time.UnixMilli(t0.UnixMilli())}
	k, v := EncodeOffsetCommit("billing", TopicPartition{"orders", 3}, o)
	if string(k) != "offset billing orders/3" {
		t.Errorf("key %q", k)
	}
	r, err := DecodeRecord(k, v)
	if err != nil || r.Kind != OffsetCommitRecord || r.Group != "billing" || r.Partition != (TopicPartition{"orders", 3}) || !r.Offset.Time.Equal(o.Time) || r.Offset.Offset != 42 || r.Offset.Member != o.Member {
		t.Errorf("offset record: %+v %v", r, err)
	}
	md := GroupMetadata{Group: "billing", Generation: 5, Strategy: RoundRobin, Members: []MemberMetadata{
		{ID: "c1-aaaaaa", ClientID: "c1", Seq: 1, Topics: []string{"orders"}, SessionTimeout: session, Assignment: tps("orders/0", "orders/2")},
		{ID: "c2-bbbbbb", ClientID: "c2", Seq: 2, Topics: []string{"orders"}, SessionTimeout: session},
	}}
	k, v = EncodeGroupMetadata(md)
	r, err = DecodeRecord(k, v)
	if err != nil || r.Kind != GroupMetadataRecord || !reflect.DeepEqual(r.Metadata, md) {
		t.Errorf("group record: %+v %v\nwant %+v", r.Metadata, err, md)
	}
	for _, k := range []string{"", "offset billing", "offset billing orders", "group", "who knows"} {
		if _, err := DecodeRecord([]byte(k), []byte("{}")); err == nil {
			t.Errorf("key %q decoded", k)
		}
	}
	if _, err := DecodeRecord([]byte("group billing"), []byte("not json")); err == nil {
		t.Error("bad value decoded")
	}
}

// A new coordinator rebuilt from the records continues the generation and
// the committed offsets, and members keep their assignment without a
// rebalance.
func TestLoadRebuildsGroups(t *testing.T) {
	old := newCoord()
	var log []Record
	write := func() {
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
	}
	a := join(t, old, "c1", "", t0)
	write()
	b := join(t, old, "c2", "", t0)
	join(t, old, "c1", a.MemberID, t0)
	write()
	a, b = status(t, old, a), status(t, old, b)
	commit := func(m JoinResult, tp TopicPartition, off int64) {
		if err := old.ValidateCommit("billing", m.MemberID, m.Generation, map[TopicPartition]int64{tp: off}); err != nil {
			t.Fatal(err)
		}
		o := Offset{Offset: off, Generation: m.Generation, Member: m.MemberID, Time: t0}
		old.ApplyOffset("billing", tp, o)
		log = append(log, Record{Kind: OffsetCommitRecord, Group: "billing", Partition: tp, Offset: o})
	}
	commit(a, TopicPartition{"orders", 0}, 10)
	commit(a, TopicPartition{"orders", 0}, 12)
	commit(b, TopicPartition{"orders", 3}, 7)
	// A third member joins, but the coordinator dies before the rebalance completes.
	join(t, old, "c3", "", t0)

	c := newCoord()
	for _, r := range log {
		c.Load(r)
	}
	later := t0.Add(5 * time.Second)
	c.FinishLoad(later)
	d, _ := c.Describe("billing")
	if d.State != Stable || d.Generation != 2 || len(d.Members) != 2 {
		t.Fatalf("rebuilt: %s generation %d with %d members", d.State, d.Generation, len(d.Members))
	}
	if !reflect.DeepEqual(d.Topics, []string{"orders"}) {
		t.Errorf("rebuilt group reads topics %v; want the members' [orders]", d.Topics)
	}
	if got := c.Committed("billing", tps("orders/0", "orders/1", "orders/3")); !reflect.DeepEqual(got, map[TopicPartition]int64{{"orders", 0}: 12, {"orders", 1}: -1, {"orders", 3}: 7}) {
		t.Errorf("rebuilt offsets: %v", got)
	}
	// Sessions start afresh: nobody expires at once.
	if ch := c.Tick(later.Add(session / 2)); len(ch) != 0 {
		t.Errorf("members expired right after the load: %+v", ch)
	}
	if _, err := c.Heartbeat("billing", a.MemberID, 2, later); err != nil {
		t.Errorf("a member of the rebuilt generation heartbeats: %v", err)
	}
	if err := c.ValidateCommit("billing", b.MemberID, 2, map[TopicPartition]int64{{"orders", 3}: 9}); err != nil {
		t.Errorf("commit to the rebuilt group: %v", err)
	}
	// The member-to-be whose join was lost must start over.
	if _, _, err := c.Join(JoinRequest{Group: "billing", MemberID: "c3-ffffff", ClientID: "c3", Topics: []string{"orders"}, SessionTimeout: session}, later); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("lost joiner: %v", err)
	}
}

func TestRequestSeekReachesOwner(t *testing.T) {
	c := newCoord()
	a := join(t, c, "c1", "", t0)
	persistAll(t, c)
	a = status(t, c, a)
	if owner := c.RequestSeek("billing", TopicPartition{"orders", 2}, 0); owner != "c1" {
		t.Fatalf("owner %q", owner)
	}
	hb, err := c.Heartbeat("billing", a.MemberID, 1, t0)
	if err != nil || hb.Seeks[TopicPartition{"orders", 2}] != 0 || len(hb.Seeks) != 1 {
		t.Fatalf("heartbeat carries the seek: %+v %v", hb, err)
	}
	if hb, _ := c.Heartbeat("billing", a.MemberID, 1, t0); len(hb.Seeks) != 0 {
		t.Errorf("the seek is delivered once: %+v", hb)
	}
	if owner := c.RequestSeek("billing", TopicPartition{"clicks", 0}, 0); owner != "" {
		t.Errorf("unowned partition has owner %q", owner)
	}
}
