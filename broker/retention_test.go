package broker

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// manualClock is a clock the test moves by hand.
type manualClock struct{ ns atomic.Int64 }

func (m *manualClock) now() time.Time          { return time.Unix(0, m.ns.Load()) }
func (m *manualClock) advance(d time.Duration) { m.ns.Add(int64(d)) }

// clockStart is the time a newClockedCluster's clock starts at.
var clockStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// newClockedCluster starts three nodes whose record timestamps, retention
// and TTLs follow a manual clock set to clockStart, closed at the end of
// the test.
func newClockedCluster(t testing.TB) (*Cluster, *manualClock) {
	t.Helper()
	clock := &manualClock{}
	clock.ns.Store(clockStart.UnixNano())
	c, err := NewCluster(Config{Nodes: 3, Now: clock.now, DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, clock
}

// Acceptance 5: retention with tiny segments deletes whole old segments,
// moves the log start, and a read below it fails clearly.
func TestRetentionDeletesWholeSegments(t *testing.T) {
	t.Parallel()
	c, clock := newClockedCluster(t)
	tp := TopicPartition{"clicks", 0}
	mustCreate(t, c, TopicConfig{Name: "clicks", Partitions: 1, SegmentRecords: 4, RetentionAge: 10 * time.Minute})
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, BatchSize: 1})
	produce := func(from, to int) {
		var msgs []Message
		for i := from; i < to; i++ {
			msgs = append(msgs, msg("clicks", "user-1", i))
		}
		for _, r := range p.Produce(ctxFor(t, 10*time.Second), msgs...) {
			if r.Outcome != OutcomeAcked {
				t.Fatalf("produce: %v", r.Err)
			}
		}
	}
	produce(0, 10) // segments 0–3, 4–7 closed; 8–9 active
	clock.advance(11 * time.Minute)
	produce(10, 14) // segment 8–11 closes with new records; 12–13 active

	waitFor(t, 10*time.Second, "retention to delete the old segments on every replica", func() bool {
		for _, r := range partitionState(c.Snapshot(), tp).Replicas {
			if r.LogStart != 8 {
				return false
			}
		}
		return true
	})
	for _, node := range c.Nodes() {
		// Retention deleted whole files: every replica's first file is
		// segment 8's, and the files hold the 6 records from there.
		waitFor(t, 10*time.Second, node+" to apply all 14 records", func() bool { return applied(c, node, tp) == 14 })
		got, segs := fileOffsets(t, c, c.Files().PartitionDir(node, tp))
		if len(got) != 6 || got[0] != 8 || segs != 2 {
			t.Errorf("%s's files hold %v in %d segments; want 8–13 in 2", node, got, segs)
		}
	}
	rs := replicaState(c.Snapshot(), tp, c.Leader(tp))
	if len(rs.Segments) == 0 || rs.Segments[0].BaseOffset != 8 {
		t.Fatalf("segments after retention: %+v; want the first to start at 8", rs.Segments)
	}
	for _, s := range rs.Segments {
		if s.BaseOffset%4 != 0 {
			t.Errorf("segment starts at %d: retention must delete whole segments", s.BaseOffset)
		}
	}
	_, err := c.Fetch(ctxFor(t, 5*time.Second), "reader", tp, 3, 10)
	if !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("fetch below the log start: %v; want an offset-out-of-range error", err)
	}
	if !strings.Contains(err.Error(), "8") {
		t.Errorf("the error should name the valid range starting at 8: %v", err)
	}
	recs := readAll(t, c, tp)
	if len(recs) != 6 || recs[0].Offset != 8 {
		t.Errorf("after retention the log holds %d records from %d; want 6 from 8", len(recs), recs[0].Offset)
	}
	var deleted int
	for _, e := range c.Events(0) {
		if e.Kind == EventSegmentDeleted {
			deleted++
		}
	}
	if deleted != 2 {
		t.Errorf("%d segment-deleted events, want 2", deleted)
	}

	// Seeking by time lands on the first record at or after it.
	off, ok, err := c.OffsetForTime(ctxFor(t, 5*time.Second), "reader", tp, clock.now().Add(-time.Second))
	if err != nil || !ok || off != 10 {
		t.Errorf("offset for a time just before the second burst: %d ok=%v err=%v; want 10", off, ok, err)
	}
}

// badCase is one piece of bad input: the error it got, the sentinel it
// should wrap and a phrase the message should contain.
type badCase struct {
	name string
	err  error
	want error
	says string
}

// Acceptance 8: bad input returns a clear error and never panics.
func TestBadInput(t *testing.T) {
	t.Parallel()
	if _, err := NewCluster(Config{Nodes: 0}); !errors.Is(err, ErrInvalid) {
		t.Errorf("zero nodes: %v", err)
	}
	c := newTestCluster(t, 3)
	ctx := ctxFor(t, 10*time.Second)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 2})
	cases := []badCase{
		{"zero partitions", c.CreateTopic(ctx, TopicConfig{Name: "a", Partitions: 0}), ErrInvalid, "partitions=0"},
		{"rf above nodes", c.CreateTopic(ctx, TopicConfig{Name: "b", Partitions: 1, RF: 4}), ErrInvalid, "rf=4"},
		{"bad topic name", c.CreateTopic(ctx, TopicConfig{Name: "a b", Partitions: 1}), ErrInvalid, "letters"},
		{"topic exists", c.CreateTopic(ctx, TopicConfig{Name: "orders", Partitions: 1}), ErrTopicExists, "orders"},
		{"kill unknown node", c.Kill("n9"), ErrUnknownNode, "n1, n2, n3"},
		{"restart live node", c.Restart("n2"), ErrNodeUp, "kill it first"},
		{"slow negative", c.Slow("n1", -time.Second), ErrInvalid, "negative"},
		{"partition one side", c.Partition([]string{"n1"}), ErrInvalid, "two sides"},
		{"partition twice named", c.Partition([]string{"n1"}, []string{"n1", "n2"}), ErrInvalid, "two sides"},
		{"elect non-replica", c.TransferLeadership(ctx, TopicPartition{"orders", 0}, "n9"), ErrUnknownNode, "n9"},
	}
	_, err := c.Fetch(ctx, "r", TopicPartition{"nope", 0}, 0, 1)
	cases = append(cases, badCase{"fetch unknown topic", err, ErrUnknownTopic, "orders"})
	_, err = c.Fetch(ctx, "r", TopicPartition{"orders", 7}, 0, 1)
	cases = append(cases, badCase{"fetch partition out of range", err, ErrUnknownPartition, "0 to 1"})
	_, err = c.Fetch(ctx, "r", TopicPartition{"orders", 0}, 5, 1)
	cases = append(cases, badCase{"fetch past the end", err, ErrOffsetOutOfRange, ""})
	_, err = c.NewProducer(ctx, ProducerConfig{ClientID: "p", Acks: AcksLeader, Idempotent: true})
	cases = append(cases, badCase{"idempotent with acks=1", err, ErrInvalid, "acks=all"})
	if err := c.Kill("n3"); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, badCase{"kill a dead node", c.Kill("n3"), ErrNodeDown, "restart it first"})
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
			continue
		}
		if !strings.Contains(tc.err.Error(), tc.says) {
			t.Errorf("%s: %q should say %q", tc.name, tc.err, tc.says)
		}
	}
	p := mustProducer(t, c, ProducerConfig{ClientID: "p", Acks: AcksAll})
	r := p.Produce(ctx, Message{Topic: "nope", Value: []byte("x")}, Message{Topic: "orders", Pinned: true, Partition: 9, Value: []byte("x")})
	if !errors.Is(r[0].Err, ErrUnknownTopic) || r[0].Outcome != OutcomeFailed {
		t.Errorf("produce to an unknown topic: %v %v", r[0].Outcome, r[0].Err)
	}
	if !errors.Is(r[1].Err, ErrUnknownPartition) {
		t.Errorf("produce to a missing partition: %v", r[1].Err)
	}
	if _, err := ParseAcks("2"); !errors.Is(err, ErrInvalid) {
		t.Errorf("acks=2: %v", err)
	}
	if _, err := ParseTopicPartition("orders"); !errors.Is(err, ErrInvalid) {
		t.Errorf("partition without number: %v", err)
	}
}
