package kafkawire

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
)

// segmentFile is one .log file read back with franz-go's decoder.
type segmentFile struct {
	base    int64
	batches []kmsg.RecordBatch
	pos     []int64 // where each batch starts
	values  []string
}

// readSegments decodes every .log file in dir; it reports a damaged
// batch (a bad CRC included) as an error, since files are read while
// replicas are still writing them.
func readSegments(dir string) ([]segmentFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segmentFile
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), partlog.LogSuffix)
		if !ok {
			continue
		}
		var sf segmentFile
		if sf.base, err = strconv.ParseInt(name, 10, 64); err != nil {
			return nil, fmt.Errorf("%s: %v", e.Name(), err)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		pos := int64(0)
		for len(data) > 0 {
			var kb kmsg.RecordBatch
			if len(data) < 12 || int(binary.BigEndian.Uint32(data[8:]))+12 > len(data) {
				return nil, fmt.Errorf("%s: a torn batch at byte %d", e.Name(), pos)
			}
			size := int(binary.BigEndian.Uint32(data[8:])) + 12
			if err := kb.ReadFrom(data[:size]); err != nil {
				return nil, fmt.Errorf("%s at byte %d: %v", e.Name(), pos, err)
			}
			if got := crc32c(data[21:size]); got != uint32(kb.CRC) {
				return nil, fmt.Errorf("%s at byte %d: CRC %08x, the bytes give %08x", e.Name(), pos, uint32(kb.CRC), got)
			}
			recs := kb.Records
			for range kb.NumRecords {
				l, n := binary.Varint(recs)
				var r kmsg.Record
				if err := r.ReadFrom(recs[:n+int(l)]); err != nil {
					return nil, err
				}
				sf.values = append(sf.values, string(r.Value))
				recs = recs[n+int(l):]
			}
			sf.batches = append(sf.batches, kb)
			sf.pos = append(sf.pos, pos)
			data, pos = data[size:], pos+int64(size)
		}
		out = append(out, sf)
	}
	return out, nil
}

func crc32c(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// What a kgo client and the lab's own producer write lands in every
// replica's .log files as Kafka record batches: each CRC-32C holds,
// offsets run on without a gap, the records are the acknowledged ones, and
// the .index and .timeindex entries point at batch starts and timestamps.
func TestSegmentFilesHoldAcknowledgedBatches(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	dir := t.TempDir()
	l := newLabIn(t, dir, 3, broker.TopicConfig{Name: "orders", Partitions: 1, SegmentRecords: 8})
	tp := broker.TopicPartition{Topic: "orders", Partition: 0}

	var want []string
	// One record a batch from kgo and two from the lab's producer: several
	// batches to a segment, so the segments get index entries.
	cl := l.client(t, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ClientID("shop"))
	for i := range 12 {
		r := &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, "kgo %d", i)}
		if err := cl.ProduceSync(ctxFor(t, 20*time.Second), r).FirstErr(); err != nil {
			t.Fatalf("kgo produce: %v", err)
		}
		want = append(want, string(r.Value))
	}
	p, err := l.c.NewProducer(ctxFor(t, 10*time.Second), broker.ProducerConfig{ClientID: "producer", Acks: broker.AcksAll, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := range 10 {
		msgs = append(msgs, broker.Message{Topic: "orders", Value: fmt.Appendf(nil, "own %d", i), MsgID: fmt.Sprintf("producer-%d", i)})
	}
	for i, r := range p.Produce(ctxFor(t, 10*time.Second), msgs...) {
		if r.Outcome != broker.OutcomeAcked {
			t.Fatalf("own produce: %v", r.Err)
		}
		want = append(want, string(msgs[i].Value))
	}

	for _, node := range l.c.Nodes() {
		pdir := l.c.Files().PartitionDir(node, tp)
		var segs []segmentFile
		deadline := time.Now().Add(10 * time.Second)
		for {
			if err := l.c.Files().Sync(); err != nil {
				t.Fatal(err)
			}
			segs, err = readSegments(pdir)
			n := 0
			for _, s := range segs {
				n += len(s.values)
			}
			if err == nil && n == len(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's files: %d records (%v); want the %d acknowledged", node, n, err, len(want))
			}
			time.Sleep(20 * time.Millisecond)
		}
		var got []string
		next, entries := int64(0), 0
		for _, s := range segs {
			if len(s.batches) > 0 && s.batches[0].FirstOffset != s.base {
				t.Fatalf("%s: segment %d starts with offset %d", node, s.base, s.batches[0].FirstOffset)
			}
			for _, b := range s.batches {
				if b.FirstOffset != next {
					t.Fatalf("%s: a batch at offset %d, want %d: offsets must run on", node, b.FirstOffset, next)
				}
				next += int64(b.LastOffsetDelta) + 1
			}
			got = append(got, s.values...)
			entries += checkSegmentIndexes(t, pdir, s)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s's files hold %q, want %q", node, got, want)
		}
		if entries == 0 {
			t.Errorf("%s: no .index entry in any segment", node)
		}
		if len(segs) < 3 {
			t.Errorf("%s: %d segments for %d records in 8-record segments", node, len(segs), len(want))
		}
	}
}

func checkSegmentIndexes(t *testing.T, dir string, s segmentFile) (entries int) {
	t.Helper()
	// An index file appears with its first entry.
	idx, err := os.ReadFile(filepath.Join(dir, partlog.SegmentFileName(s.base, partlog.IndexSuffix)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for e := idx; len(e) >= 8; e = e[8:] {
		rel, pos := int64(binary.BigEndian.Uint32(e)), int64(binary.BigEndian.Uint32(e[4:]))
		entries++
		i := slices.Index(s.pos, pos)
		if i < 0 || s.batches[i].FirstOffset+int64(s.batches[i].LastOffsetDelta) != s.base+rel {
			t.Fatalf("segment %d: .index entry (%d, %d) is not a batch start and its last offset", s.base, rel, pos)
		}
	}
	ti, err := os.ReadFile(filepath.Join(dir, partlog.SegmentFileName(s.base, partlog.TimeIndexSuffix)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for e := ti; len(e) >= 12; e = e[12:] {
		ts, rel := int64(binary.BigEndian.Uint64(e)), int64(binary.BigEndian.Uint32(e[8:]))
		if !slices.ContainsFunc(s.batches, func(b kmsg.RecordBatch) bool {
			return b.MaxTimestamp == ts && b.FirstOffset+int64(b.LastOffsetDelta) == s.base+rel
		}) {
			t.Fatalf("segment %d: .timeindex entry (%d, %d) names no batch's timestamp and last offset", s.base, ts, rel)
		}
	}
	return entries
}

// gzipBatch is producerBatch's batch with its records compressed by
// gzip, as a client configured with compression sends it.
func gzipBatch(t *testing.T, values ...string) []byte {
	t.Helper()
	plain := producerBatch(-1, -1, values...)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	if _, err := w.Write(plain[batchHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := append(plain[:batchHeaderLen:batchHeaderLen], z.Bytes()...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint16(b[21:], 1)
	binary.BigEndian.PutUint32(b[17:], crc32c(b[crcFrom:]))
	return b
}

// keyedBatch is producerBatch's batch of one record with a key and a
// header, as a client that sets both sends it.
func keyedBatch(key, header, value string) []byte {
	b := appendBatch(nil, []broker.Record{{Timestamp: time.UnixMilli(1_000_010), Key: []byte(key), Value: []byte(value),
		Headers: []broker.Header{{Key: header, Value: []byte("1")}}}})
	binary.BigEndian.PutUint32(b[12:], ^uint32(0)) // partition leader epoch -1, as a producer sends it
	binary.BigEndian.PutUint32(b[17:], crc32c(b[crcFrom:]))
	return b
}

// A producer's batch is kept as it arrived: on every replica the .log
// file holds the very bytes the client sent, compressed ones compressed,
// with only the base offset and the partition leader epoch set; a fetch
// answers with the file's bytes unchanged, from a closed segment as from
// the active one, and a consumer reads the records back.
func TestProducedBatchIsTheFileBatch(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	// Two records a segment: each batch below starts a segment of its own.
	l := newLabIn(t, t.TempDir(), 3, broker.TopicConfig{Name: "orders", Partitions: 1, SegmentRecords: 2})
	tp := broker.TopicPartition{Topic: "orders"}
	ctx := ctxFor(t, 30*time.Second)
	leader, err := l.c.WaitForLeader(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	cl := l.client(t).Broker(int(l.s.brokerID(leader)))
	sent := [][]byte{
		producerBatch(-1, -1, "order 881 placed", "order 882 placed"),
		gzipBatch(t, "order 883 placed", "order 884 placed", "order 885 placed"),
		keyedBatch("user-7", "trace", "order 886 placed"),
	}
	var bases []int64
	for i, b := range sent {
		got := produceAnswer(t, cl, b)
		if got.ErrorCode != 0 {
			t.Fatalf("batch %d: code %d (%s)", i, got.ErrorCode, deref(got.ErrorMessage))
		}
		bases = append(bases, got.BaseOffset)
	}
	if want := []int64{0, 2, 5}; !slices.Equal(bases, want) {
		t.Fatalf("the batches got base offsets %v; want %v", bases, want)
	}
	// Batch i is the whole of segment bases[i]'s file, on every replica.
	segment := func(node string, i int) []byte {
		file, _ := os.ReadFile(filepath.Join(l.c.Files().PartitionDir(node, tp), partlog.SegmentFileName(bases[i], partlog.LogSuffix)))
		return file
	}
	for _, node := range l.c.Nodes() {
		deadline := time.Now().Add(10 * time.Second)
		for i, b := range sent {
			for {
				if err := l.c.Files().Sync(); err != nil {
					t.Fatal(err)
				}
				if len(segment(node, i)) >= len(b) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			got := segment(node, i)
			if len(got) != len(b) {
				t.Fatalf("%s: segment %d's file holds %d bytes; batch %d takes %d", node, bases[i], len(got), i, len(b))
			}
			if base, epoch := int64(binary.BigEndian.Uint64(got)), int32(binary.BigEndian.Uint32(got[12:])); base != bases[i] || epoch <= 0 {
				t.Fatalf("%s: batch %d has base offset %d and epoch %d; want %d and the leader's term", node, i, base, epoch, bases[i])
			}
			if !bytes.Equal(got[8:12], b[8:12]) || !bytes.Equal(got[16:], b[16:]) {
				t.Fatalf("%s: batch %d in the file is not the batch the client sent", node, i)
			}
		}
	}
	// A fetch answers with the leader's file as it is, whole batches of
	// one segment from the one holding the offset: from inside a batch,
	// all of it, as from Kafka. Segments 0 and 2 are closed, 5 is active.
	for _, c := range []struct {
		at    int64
		batch int
	}{{0, 0}, {1, 0}, {3, 1}, {5, 2}} {
		fr := fetchAnswer(t, cl, c.at)
		if want := segment(leader, c.batch); fr.ErrorCode != 0 || !bytes.Equal(fr.RecordBatches, want) {
			t.Errorf("a fetch at %d answers %d bytes (code %d); want segment %d's file, %d bytes", c.at, len(fr.RecordBatches), fr.ErrorCode, bases[c.batch], len(want))
		}
	}
	c := l.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().AtStart()}}))
	var got []string
	for len(got) < 6 {
		fs := c.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("consume: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			if r.Offset == 5 && (string(r.Key) != "user-7" || len(r.Headers) != 1 || r.Headers[0].Key != "trace") {
				t.Errorf("offset 5 has key %q and headers %v; want user-7 and trace", r.Key, r.Headers)
			}
		})
	}
	want := []string{"order 881 placed", "order 882 placed", "order 883 placed", "order 884 placed", "order 885 placed", "order 886 placed"}
	if !slices.Equal(got, want) {
		t.Errorf("consumed %q; want %q", got, want)
	}
}

// fetchAnswer fetches orders/0 from offset, up to 1 MiB, from cl.
func fetchAnswer(t *testing.T, cl *kgo.Broker, offset int64) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes = -1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxFor(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}
