package broker

import (
	"fmt"
	"testing"
	"time"
)

// A replica that was down while the leader snapshotted and compacted its
// raft log past where the replica stopped can only catch up by snapshot
// install. It must end with the same committed log, and the snapshot must
// survive its own restart. With files, the leader's snapshot reads its
// closed segments from their files, and the follower writes the log it
// restores to its own.
func TestRestartedReplicaCatchesUpBySnapshot(t *testing.T) {
	t.Parallel()
	for _, files := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "files"}[files], func(t *testing.T) {
			t.Parallel()
			cfg := Config{Nodes: 3}
			if files {
				cfg.DataDir = t.TempDir()
			}
			c, err := NewCluster(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			catchUpBySnapshot(t, c)
		})
	}
}

func catchUpBySnapshot(t *testing.T, c *Cluster) {
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1, SegmentRecords: 100})
	if err := c.TransferLeadership(ctxFor(t, 10*time.Second), tp, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("n3"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	n3disk := c.nodes["n3"].disks[tp.String()]
	c.mu.Unlock()
	n3last, _ := n3disk.Logs.LastIndex()

	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: true})
	lead := c.replicaOn("n1", tp.String())
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i += 100 {
		var msgs []Message
		for k := i; k < i+100; k++ {
			msgs = append(msgs, Message{Topic: "orders", Key: []byte(fmt.Sprint(k % 3)), Value: []byte(fmt.Sprint(k)), MsgID: fmt.Sprint("m", k)})
		}
		for _, r := range p.Produce(ctxFor(t, 20*time.Second), msgs...) {
			if r.Outcome != OutcomeAcked {
				t.Fatalf("produce: %v", r.Err)
			}
		}
		first, _ := lead.disk.Logs.FirstIndex()
		if first > n3last+1 {
			break // n3's next entry is gone from the leader's log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader never compacted its log (first index %d)", first)
		}
	}
	if err := c.Restart("n3"); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, tp)
	if n3disk.Snaps.Index() == 0 {
		t.Fatal("n3 caught up without a snapshot; the test meant to force an install")
	}
	log := assertReplicasIdentical(t, c, tp)
	if dir := c.Files().PartitionDir("n3", tp); dir != "" {
		if got, _ := fileOffsets(t, c, dir); len(got) != len(log) {
			t.Fatalf("n3's segment files hold %d records after the install, its log %d", len(got), len(log))
		}
		// The snapshot as it arrived, every byte a copy, gives way to
		// n3's own, which names its files.
		waitFor(t, 10*time.Second, "n3's own snapshot to replace the one it installed", func() bool {
			size, copied := n3disk.Snaps.Held()
			return copied < size
		})
	}

	// Restart n3 once more: it rebuilds from the installed snapshot.
	if err := c.Kill("n3"); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart("n3"); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, tp)
	if again := committedLog(t, c, "n3", tp); len(again) != len(log) {
		t.Fatalf("after a second restart n3 holds %d records, want %d", len(again), len(log))
	}
}

// The leader predicts offsets when it stores an entry (acks=1 answers with
// them). A repeated batch takes no offsets when applied; the prediction for
// later entries must not drift by its size.
func TestAcksOneOffsetsStayExactAfterARepeat(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	ctx := ctxFor(t, 20*time.Second)
	idem := mustProducer(t, c, ProducerConfig{ClientID: "idem", Acks: AcksAll, Idempotent: true, BatchSize: 3})
	if err := c.DropNextReply("idem"); err != nil {
		t.Fatal(err)
	}
	for _, r := range idem.Produce(ctx, msg("orders", "a", 0), msg("orders", "a", 1), msg("orders", "a", 2)) {
		if r.Outcome != OutcomeAcked || !r.Duplicate {
			t.Fatalf("the retried batch: %v duplicate=%v (%v); want acknowledged as a repeat", r.Outcome, r.Duplicate, r.Err)
		}
	}
	one := mustProducer(t, c, ProducerConfig{ClientID: "one", Acks: AcksLeader})
	var msgs []Message
	for i := 10; i < 15; i++ {
		msgs = append(msgs, msg("orders", "b", i))
	}
	res := one.Produce(ctx, msgs...)
	waitConverged(t, c, tp)
	at := map[string]int64{}
	for _, r := range readAll(t, c, tp) {
		at[r.MsgID] = r.Offset
	}
	for i, r := range res {
		if got, ok := at[msgs[i].MsgID]; !ok || got != r.Offset {
			t.Errorf("%s: acks=1 answered offset %d, the log has it at %d (present %v)", msgs[i].MsgID, r.Offset, got, ok)
		}
	}
	if len(at) != 8 {
		t.Errorf("the log holds %d records, want 3 + 5", len(at))
	}
}
