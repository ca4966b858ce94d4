package kafkawire

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// A leader whose disk fills up fails the produce that hit the full disk
// with KAFKA_STORAGE_ERROR, refuses the next ones the same way, and loses
// none of the records it acknowledged before: they are read back, and
// the leader's files hold them again once it restarts with room.
func TestFullDiskIsAStorageError(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLabIn(t, t.TempDir(), 3, broker.TopicConfig{Name: "orders", Partitions: 1})
	tp := broker.TopicPartition{Topic: "orders"}
	ctx := ctxFor(t, 30*time.Second)
	leader, err := l.c.WaitForLeader(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	cl := l.client(t).Broker(int(l.s.brokerID(leader)))
	var acked []string
	for i := range 5 {
		v := fmt.Sprintf("order %d", i)
		if got := produceAnswer(t, cl, producerBatch(-1, -1, v)); got.ErrorCode != 0 || got.BaseOffset != int64(i) {
			t.Fatalf("produce %d before the disk filled: code %d at %d; want ok at %d", i, got.ErrorCode, got.BaseOffset, i)
		}
		acked = append(acked, v)
	}

	l.c.Files().FailWrites(leader, syscall.ENOSPC)
	// Larger than what a replica gathers before a write: it is written at
	// once, and the write fails.
	big := strings.Repeat("x", 96<<10)
	hit := produceAnswer(t, cl, producerBatch(-1, -1, big))
	if hit.ErrorCode != codeKafkaStorageError || !strings.Contains(deref(hit.ErrorMessage), "no space left on device") {
		t.Fatalf("the produce that hit the full disk: code %d (%s); want KAFKA_STORAGE_ERROR (%d) naming the full disk",
			hit.ErrorCode, deref(hit.ErrorMessage), codeKafkaStorageError)
	}
	if got := produceAnswer(t, cl, producerBatch(-1, -1, "order 9")); got.ErrorCode != codeKafkaStorageError {
		t.Fatalf("a produce after the disk filled: code %d (%s); want KAFKA_STORAGE_ERROR", got.ErrorCode, deref(got.ErrorMessage))
	}
	if !slices.ContainsFunc(l.c.Events(0), func(e broker.Event) bool {
		return e.Kind == broker.EventFiles && strings.HasPrefix(e.Text, leader+" stopped writing orders/0's segment files: ")
	}) {
		t.Error("the timeline does not say the leader stopped writing its files")
	}

	// The refusal handed leadership on, as Kafka moves it off a broker
	// whose log folder failed: another replica takes produces.
	var next string
	deadline := time.Now().Add(20 * time.Second)
	for next == "" || next == leader {
		if time.Now().After(deadline) {
			t.Fatalf("%s still leads orders/0 with a full disk", leader)
		}
		time.Sleep(10 * time.Millisecond)
		next, _ = l.c.WaitForLeader(ctx, tp)
	}
	cl = l.client(t).Broker(int(l.s.brokerID(next)))
	var got kmsg.ProduceResponseTopicPartition
	for got = produceAnswer(t, cl, producerBatch(-1, -1, "order 10")); got.ErrorCode == codeNotLeaderOrFollower; {
		if time.Now().After(deadline) {
			t.Fatalf("%s never took produces", next)
		}
		time.Sleep(10 * time.Millisecond)
		got = produceAnswer(t, cl, producerBatch(-1, -1, "order 10"))
	}
	if got.ErrorCode != 0 {
		t.Fatalf("a produce to the new leader %s: code %d (%s)", next, got.ErrorCode, deref(got.ErrorMessage))
	}

	// Every acknowledged record is still there. The one that hit the full
	// disk had reached raft: it is there too, the refused one is not.
	values := func() []string {
		req := kmsg.NewPtrFetchRequest()
		req.MaxBytes, req.MinBytes = 1<<20, 1
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "orders"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		kr, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		p := kr.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("fetch from the leader: code %d", p.ErrorCode)
		}
		var out []string
		for b := p.RecordBatches; len(b) > 0; {
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil {
				t.Fatalf("a fetched batch: %v", err)
			}
			b = b[12+int(kb.Length):]
			recs := kb.Records
			for range kb.NumRecords {
				var r kmsg.Record
				n, k := binary.Varint(recs)
				if err := r.ReadFrom(recs[:k+int(n)]); err != nil {
					t.Fatalf("a fetched record: %v", err)
				}
				recs = recs[k+int(n):]
				out = append(out, string(r.Value))
			}
		}
		return out
	}
	if got := values(); !slices.Equal(got, append(slices.Clone(acked), big, "order 10")) {
		t.Fatalf("read back from %s after the disk filled: %.80q; want the %d acknowledged records, the one that reached raft and the next", next, got, len(acked))
	}

	// With room again, a restart rebuilds the leader's files from raft.
	if err := l.c.Kill(leader); err != nil {
		t.Fatal(err)
	}
	l.c.Files().FailWrites(leader, nil)
	if err := l.c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	dir := l.c.Files().PartitionDir(leader, tp)
	deadline = time.Now().Add(20 * time.Second)
	for {
		if err := l.c.Files().Sync(); err != nil {
			t.Fatal(err)
		}
		segs, err := readSegments(dir)
		var vals []string
		for _, s := range segs {
			vals = append(vals, s.values...)
		}
		if err == nil && slices.Equal(vals, append(slices.Clone(acked), big, "order 10")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's files after its restart: %d records (%v); want the %d acknowledged, the one that reached raft and the next", leader, len(vals), err, len(acked))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
