package kafkawire

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
)

// producerBatch is a v2 batch of values from an idempotent producer,
// written as a client writes one.
func producerBatch(pid int64, seq int32, values ...string) []byte {
	recs := make([]broker.Record, len(values))
	for i, v := range values {
		recs[i] = broker.Record{Offset: int64(i), Timestamp: time.UnixMilli(1_000_000 + int64(i)), Value: []byte(v)}
	}
	b := appendBatch(nil, recs)
	binary.BigEndian.PutUint32(b[8+4:], ^uint32(0)) // partition leader epoch -1, as a producer sends it
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	binary.BigEndian.PutUint16(b[51:], 0)
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[crcFrom:], castagnoli))
	return b
}

func produceReq(records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = "orders"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func produceAnswer(t testing.TB, cl *kgo.Broker, records []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	kr, err := cl.Request(ctxFor(t, 10*time.Second), produceReq(records))
	if err != nil {
		t.Fatal(err)
	}
	return kr.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// What a Kafka broker answers, request by request: a repeated batch gets
// its original offset, a gap in sequence numbers is refused, a damaged
// batch is corrupt, a fetch past the end is out of range, and a lookup by
// time finds the first record at or after it.
func TestKafkaAnswers(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	l := newLabIn(t, t.TempDir(), 3, broker.TopicConfig{Name: "orders", Partitions: 1})
	ctx := ctxFor(t, 30*time.Second)
	leader, err := l.c.WaitForLeader(ctx, broker.TopicPartition{Topic: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	cl := l.client(t).Broker(int(l.s.brokerID(leader))) // every request straight to the leader, as a client sends it
	ir, err := cl.Request(ctx, kmsg.NewPtrInitProducerIDRequest())
	if err != nil {
		t.Fatal(err)
	}
	pid := ir.(*kmsg.InitProducerIDResponse).ProducerID
	if pid <= 0 {
		t.Fatalf("InitProducerID gave producer id %d", pid)
	}

	first := produceAnswer(t, cl, producerBatch(pid, 0, "a", "b"))
	again := produceAnswer(t, cl, producerBatch(pid, 0, "a", "b"))
	if first.ErrorCode != 0 || again.ErrorCode != 0 || again.BaseOffset != first.BaseOffset {
		t.Fatalf("first answer %d at %d, the repeat %d at %d (%v); want both ok at the same offset", first.ErrorCode, first.BaseOffset, again.ErrorCode, again.BaseOffset, deref(again.ErrorMessage))
	}
	if gap := produceAnswer(t, cl, producerBatch(pid, 5, "c")); gap.ErrorCode != codeOutOfOrderSequence {
		t.Fatalf("a batch at sequence 5 after 0–1 got code %d; want OUT_OF_ORDER_SEQUENCE_NUMBER (%d)", gap.ErrorCode, codeOutOfOrderSequence)
	}
	next := produceAnswer(t, cl, producerBatch(pid, 2, "c"))
	if next.ErrorCode != 0 || next.BaseOffset != first.BaseOffset+2 {
		t.Fatalf("the next batch got code %d at %d; want ok at %d", next.ErrorCode, next.BaseOffset, first.BaseOffset+2)
	}
	bad := producerBatch(0, 0, "x")
	bad[len(bad)-1] ^= 0xff
	if got := produceAnswer(t, cl, bad); got.ErrorCode != codeCorruptMessage {
		t.Fatalf("a batch with a wrong CRC got code %d; want CORRUPT_MESSAGE (%d)", got.ErrorCode, codeCorruptMessage)
	}

	fetch := func(offset int64, epoch int32) kmsg.FetchResponseTopicPartition {
		req := kmsg.NewPtrFetchRequest()
		req.MaxBytes, req.MinBytes = 1<<20, 1
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "orders"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = offset, 1<<20, epoch
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		kr, err := cl.Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	}
	if got := fetch(99, -1); got.ErrorCode != codeOffsetOutOfRange {
		t.Fatalf("a fetch at 99 of a 3-record log got code %d; want OFFSET_OUT_OF_RANGE (%d)", got.ErrorCode, codeOffsetOutOfRange)
	}
	if got := fetch(0, -1); got.ErrorCode != 0 || got.HighWatermark != 3 || got.LastStableOffset != 3 {
		t.Fatalf("a fetch from 0 = code %d, hwm %d, lso %d; want 0, 3, 3", got.ErrorCode, got.HighWatermark, got.LastStableOffset)
	}
	// The corrupt batch reached no file either: the leader's holds the
	// three records of the good batches.
	if err := l.c.Files().Sync(); err != nil {
		t.Fatal(err)
	}
	segs, err := readSegments(l.c.Files().PartitionDir(leader, broker.TopicPartition{Topic: "orders"}))
	if err != nil || len(segs) != 1 || !slices.Equal(segs[0].values, []string{"a", "b", "c"}) {
		t.Fatalf("the leader's segment files after the corrupt batch: %+v, %v; want the records a, b, c", segs, err)
	}
	epoch := int32(l.c.Snapshot().Topics[0].Partitions[0].Epoch)
	if got := fetch(0, epoch-1); got.ErrorCode != codeFencedLeaderEpoch {
		t.Fatalf("a fetch naming epoch %d of %d got code %d; want FENCED_LEADER_EPOCH", epoch-1, epoch, got.ErrorCode)
	}
	if got := fetch(0, epoch+1); got.ErrorCode != codeUnknownLeaderEpoch {
		t.Fatalf("a fetch naming epoch %d of %d got code %d; want UNKNOWN_LEADER_EPOCH", epoch+1, epoch, got.ErrorCode)
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "orders"
	for _, ts := range []int64{broker.OffsetEarliest, broker.OffsetLatest, 1_000_001, 9_000_000_000_000} {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Timestamp = ts
		lt.Partitions = append(lt.Partitions, lp)
	}
	lo.Topics = append(lo.Topics, lt)
	kr, err := cl.Request(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range kr.(*kmsg.ListOffsetsResponse).Topics[0].Partitions {
		got = append(got, p.Offset)
	}
	if want := []int64{0, 3, 1, -1}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("earliest, latest, at 1,000,001 ms, in the far future = %v; want %v", got, want)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
