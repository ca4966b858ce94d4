package broker

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// A replica that was down while the leader snapshotted and compacted its
// raft log past where the replica stopped can only catch up by snapshot
// install. It must end with the same committed log, and the snapshot must
// survive its own restart.
func TestRestartedReplicaCatchesUpBySnapshot(t *testing.T) {
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	if err := c.TransferLeadership(ctxFor(t, 10*time.Second), tp, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("n3"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	n3disk := c.nodes["n3"].disks[tp.String()]
	c.mu.Unlock()
	n3last, _ := n3disk.logs.LastIndex()

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
		first, _ := lead.disk.logs.FirstIndex()
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
	if n3disk.snaps.index() == 0 {
		t.Fatal("n3 caught up without a snapshot; the test meant to force an install")
	}
	log := assertReplicasIdentical(t, c, tp)

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

func TestChunksKeepBytesInOrder(t *testing.T) {
	var c chunks
	var want []byte
	for i := 0; i < 3000; i++ {
		p := make([]byte, 700+i%13)
		for k := range p {
			p[k] = byte(i + k)
		}
		c.Write(p)
		want = append(want, p...)
	}
	got, _ := io.ReadAll(c.reader())
	if c.size() != int64(len(want)) || !bytes.Equal(got, want) {
		t.Fatalf("chunks hold %d bytes (read back %d), want %d, equal=%v", c.size(), len(got), len(want), bytes.Equal(got, want))
	}
	if len(c.pieces) < 2 {
		t.Fatalf("%d bytes fit in %d chunk(s); the test should span several", len(want), len(c.pieces))
	}
}

// The leader predicts offsets when it stores an entry (acks=1 answers with
// them). A repeated batch takes no offsets when applied; the prediction for
// later entries must not drift by its size.
func TestAcksOneOffsetsStayExactAfterARepeat(t *testing.T) {
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

// Shared pieces are kept by reference, small ones copied, and written bytes
// around them still land in order.
func TestChunksShareLargePieces(t *testing.T) {
	var c chunks
	var want []byte
	var shared [][]byte
	for i := 0; i < 500; i++ {
		small := []byte{byte(i), byte(i >> 8), 7}
		c.Write(small)
		want = append(want, small...)
		p := make([]byte, []int{minShared - 1, minShared, 3000}[i%3])
		for k := range p {
			p[k] = byte(i * k)
		}
		c.WriteShared(p)
		want = append(want, p...)
		if len(p) >= minShared {
			shared = append(shared, p)
		}
	}
	got, _ := io.ReadAll(c.reader())
	if c.size() != int64(len(want)) || !bytes.Equal(got, want) {
		t.Fatalf("chunks hold %d bytes (read back %d), want %d, equal=%v", c.size(), len(got), len(want), bytes.Equal(got, want))
	}
	kept := 0
	for _, piece := range c.pieces {
		for _, p := range shared {
			if len(piece) == len(p) && &piece[0] == &p[0] {
				kept++
			}
		}
	}
	if kept != len(shared) {
		t.Errorf("%d of %d large shared pieces kept by reference", kept, len(shared))
	}
	if len(c.pieces) > 2*len(shared)+2 {
		t.Errorf("%d pieces for %d shared ones: the written bytes between them should extend one buffer's pieces, not add small copies", len(c.pieces), len(shared))
	}
}

// Bytes written for later are computed once, when the stream is first
// read, and land where they were written.
func TestChunksFillLaterOnFirstRead(t *testing.T) {
	var c chunks
	c.Write([]byte("ab"))
	calls := 0
	c.WriteLater(3, func(p []byte) { calls++; copy(p, "xyz") })
	c.WriteShared(bytes.Repeat([]byte{'s'}, minShared))
	c.Write([]byte("cd"))
	if calls != 0 {
		t.Fatalf("filled %d times before any read", calls)
	}
	want := "abxyz" + strings.Repeat("s", minShared) + "cd"
	stored := c // the store keeps a copy of the sink's chunks
	for range 2 {
		got, _ := io.ReadAll(stored.reader())
		if string(got) != want || stored.size() != int64(len(want)) {
			t.Fatalf("read %q (size %d), want %q", got, stored.size(), want)
		}
	}
	if got, _ := io.ReadAll(c.reader()); string(got) != want || calls != 1 {
		t.Fatalf("the sink's own view read %q after %d fills, want %q after 1", got, calls, want)
	}
}
