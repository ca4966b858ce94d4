package partlog

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// clientBatch is a Kafka batch as a client sends it: base offset 0,
// partition leader epoch -1, compressed with gzip when asked.
func clientBatch(t *testing.T, zip bool, recs []Record) []byte {
	t.Helper()
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	raw := AppendKafkaBatch(nil, recs, 0, 0, 0)
	binary.BigEndian.PutUint32(raw[12:], ^uint32(0))
	if !zip {
		return raw
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(raw[KafkaBatchHeaderLen:])
	w.Close()
	out := append(raw[:KafkaBatchHeaderLen:KafkaBatchHeaderLen], z.Bytes()...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint16(out[21:], 1) // gzip
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[kafkaCRCFrom:], castagnoli))
	return out
}

func gunzip(codec int16, data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func appendWire(t *testing.T, l *Log, raw []byte, epoch uint64) AppendResult {
	t.Helper()
	kv, minTS, err := wireInfo(raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.AppendEncoded(AppendWireBatch(nil, raw, kv, minTS), epoch)
	if err != nil {
		t.Fatalf("append a client's batch: %v", err)
	}
	return res
}

// A Kafka client's batch, plain or compressed, is the batch in the
// segment file byte for byte but for its base offset and leader epoch;
// its records read back with ids derived from the partition, key and
// value, and a restart from the files keeps the bytes and the ids.
func TestClientBatchIsTheFileBatch(t *testing.T) {
	SetDecompressor(gunzip)
	dir := t.TempDir()
	cfg := Config{Name: "orders/0"}
	l := newLog(t, cfg)
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, Batch{Records: recs("own", 1, 5, 1e15)}, 6) // the lab's own, re-encoded with its id
	plain := recs("a", 2, 10, 1_700_000_000e9)
	plain[1].Headers = []Header{{Key: "trace", Value: []byte("7")}}
	plain[0].MsgID, plain[1].MsgID = "", ""
	zipped := recs("z", 3, 50, 1_700_000_100e9)
	for i := range zipped {
		zipped[i].MsgID = ""
	}
	sent := [][]byte{clientBatch(t, false, plain), clientBatch(t, true, zipped)}
	for _, raw := range sent {
		appendWire(t, l, raw, 7)
	}
	l.NoteApplied(3) // the raft index of the last batch, which a restart starts from
	l.DetachDir()
	file, err := os.ReadFile(filepath.Join(dir, SegmentFileName(0, LogSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	own, err := ParseKafkaBatch(file)
	if err != nil {
		t.Fatal(err)
	}
	pos, base := own.Size(), int64(1)
	for i, raw := range sent {
		got := file[pos : pos+int64(len(raw))]
		kb, err := ParseKafkaBatch(got)
		if err != nil || !kb.CRCValid || kb.BaseOffset != base || kb.LeaderEpoch != 7 {
			t.Fatalf("batch %d in the file: %+v, %v; want base offset %d, epoch 7, a valid CRC", i, kb, err, base)
		}
		if !bytes.Equal(got[8:12], raw[8:12]) || !bytes.Equal(got[16:], raw[16:]) {
			t.Errorf("batch %d: the file's bytes differ from the client's beyond the base offset and epoch", i)
		}
		pos, base = pos+int64(len(raw)), base+kb.LastOffset-kb.BaseOffset+1
	}
	if pos != int64(len(file)) {
		t.Errorf("the file holds %d bytes; the batches take %d", len(file), pos)
	}

	check := func(what string, l *Log) {
		t.Helper()
		got := readAll(t, l)
		want := append(append(recs("own", 1, 5, 1e15), plain...), zipped...)
		if len(got) != len(want) {
			t.Fatalf("%s: %d records; want %d", what, len(got), len(want))
		}
		for i, r := range got {
			w := want[i]
			id := w.MsgID
			if i > 0 {
				id = WireMsgID("orders/0", w.Key, w.Value)
			}
			if r.Offset != int64(i) || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || r.MsgID != id ||
				r.Timestamp != w.Timestamp || len(r.Headers) != len(w.Headers) {
				t.Errorf("%s: record %d is %+v; want %+v with id %s", what, i, r, w, id)
			}
		}
		if off, ok := l.OffsetForTime(1_700_000_101e9); !ok || off != 4 {
			t.Errorf("%s: the first record at or after a time inside the compressed batch: %d, %v; want 4", what, off, ok)
		}
	}
	check("as appended", l)
	var snap bytes.Buffer
	if _, err := l.WriteTo(&snap); err != nil {
		t.Fatal(err)
	}
	restored, err := ReadLog(&snap)
	if err != nil {
		t.Fatalf("a snapshot with a client's batches: %v", err)
	}
	check("from a snapshot", restored)
	back, _, err := Recover(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	check("recovered", back)
	if b := back.segs[0].batches[2]; !bytes.Equal(KafkaBatchOf(b.data)[16:], sent[1][16:]) {
		t.Error("the recovered log does not keep the compressed batch as the file holds it")
	}
}

// A client's batch that does not hold what its header says is refused
// before anything is written.
func TestClientBatchRefusedWhenDamaged(t *testing.T) {
	raw := clientBatch(t, false, recs("a", 2, 10, 1e15))
	for _, tc := range []struct {
		what string
		bad  func([]byte) []byte
	}{
		{"a cut record", func(b []byte) []byte {
			b = b[:len(b)-3]
			binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
			return b
		}},
		{"a count past its records", func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 3); return b }},
		{"a wrong last offset delta", func(b []byte) []byte { binary.BigEndian.PutUint32(b[23:], 5); return b }},
		{"a transactional batch", func(b []byte) []byte { b[22] |= kafkaTransactional; return b }},
	} {
		l := newLog(t, Config{})
		bad := tc.bad(bytes.Clone(raw))
		if _, err := l.AppendEncoded(AppendWireBatch(nil, bad, 20, 1e15), 1); err == nil {
			t.Errorf("%s: appended", tc.what)
		}
		if l.EndOffset() != 0 {
			t.Errorf("%s: the log ends at %d", tc.what, l.EndOffset())
		}
	}
}

// The cleaner rewrites what is left of a client's batch without giving
// its records an id header they were not sent with; their ids are still
// derived on reading, after a restart too.
func TestCompactedClientRecordsGetNoIDHeader(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "prices/0", Compact: true, SegmentRecords: 2}
	l := newLog(t, cfg)
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	rec := func(k, v string) Record { return Record{Timestamp: 1e15, Key: []byte(k), Value: []byte(v)} }
	for _, b := range [][]Record{{rec("k1", "a"), rec("k2", "b")}, {rec("k1", "c"), rec("k3", "d")}, {rec("k9", "x")}} {
		appendWire(t, l, clientBatch(t, false, b), 1)
	}
	if _, ok := l.Compact(2e15); !ok {
		t.Fatal("no compaction pass")
	}
	check := func(what string, l *Log) {
		t.Helper()
		var got []string
		for _, r := range readAll(t, l) {
			if r.MsgID != WireMsgID("prices/0", r.Key, r.Value) {
				t.Errorf("%s: record %d has id %q", what, r.Offset, r.MsgID)
			}
			got = append(got, fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, r.Value))
		}
		if want := "1:k2=b 2:k1=c 3:k3=d 4:k9=x"; strings.Join(got, " ") != want {
			t.Errorf("%s: %s; want %s", what, strings.Join(got, " "), want)
		}
	}
	check("compacted", l)
	l.NoteApplied(3)
	l.DetachDir()
	file, err := os.ReadFile(filepath.Join(dir, SegmentFileName(0, LogSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte(MsgIDHeader)) {
		t.Error("the compacted segment's file holds an id header")
	}
	back, _, err := Recover(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	check("recovered", back)
}

// A client's batch leaves memory with its closed segment only when the
// append's one walk over its records found the envelope to be theirs:
// one whose envelope says otherwise could not be rebuilt from the file
// as it was appended, so it stays, and both read back whole.
func TestClientBatchLeavesMemoryOnlyWhenItsFileGivesItBack(t *testing.T) {
	ts := int64(1_700_000_000_000) * 1e6
	l := newLog(t, Config{SegmentRecords: 3, Name: "orders/0"})
	if err := l.AttachDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	good := clientBatch(t, false, msRecs("good", 3, ts))
	appendWire(t, l, good, 1)
	off := clientBatch(t, false, msRecs("off", 3, ts+1e9))
	kv, minTS, err := wireInfo(off)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendEncoded(AppendWireBatch(nil, off, kv+1, minTS), 1); err != nil {
		t.Fatalf("a batch whose envelope counts one byte too many: %v", err)
	}
	appendWire(t, l, clientBatch(t, false, msRecs("last", 3, ts+2e9)), 1) // closes the second segment
	if n := len(l.segs); n != 3 {
		t.Fatalf("%d segments; want 3", n)
	}
	if l.segs[0].batches[0].data != nil {
		t.Error("the batch whose file gives it back is still in memory after its segment closed")
	}
	if l.segs[1].batches[0].data == nil {
		t.Error("the batch whose envelope is not its records' left memory; its file cannot give it back as appended")
	}
	got := readAll(t, l)
	if len(got) != 9 || string(got[0].Value) != string(msRecs("good", 3, ts)[0].Value) || string(got[3].Value) != string(msRecs("off", 3, ts+1e9)[0].Value) {
		t.Errorf("read back %d records, the first %q and the fourth %q", len(got), got[0].Value, got[3].Value)
	}
}

// A leader writes the lab's own batch in Kafka's format (version 9) when
// the file gives it back exactly: its records read as the lab's encoding
// of the same batch reads, every replica's file gets the leader's bytes
// with only the base offset and epoch set, and a batch the file could
// not give back is written in the lab's own encoding.
func TestProducedBatchIsTheFileBatch(t *testing.T) {
	ts := int64(1_700_000_000_000) * 1e6
	batches := []Batch{
		{Records: msRecs("plain", 4, ts)},
		{ProducerID: 12, BaseSeq: 0, Records: msRecs("idem", 3, ts+5e9)},
		{Records: []Record{{Timestamp: ts + 9e9, Key: []byte("k"), Value: nil}}}, // a tombstone, no id
		// Further apart than either lies from 1970, which int64 ms
		// deltas hold though nanoseconds would not.
		{ProducerID: 3, Records: []Record{{MsgID: "a", Value: []byte("x"), Timestamp: -5e18}, {MsgID: "b", Value: []byte("y"), Timestamp: 5e18}}},
	}
	for _, b := range batches {
		data := AppendProduceBatch(nil, b)
		if data[0] != batchVersionLab || len(data) != ProduceBatchSize(b) {
			t.Fatalf("%d records: version %d, %d bytes (ProduceBatchSize %d); want version %d", len(b.Records), data[0], len(data), ProduceBatchSize(b), batchVersionLab)
		}
		got, err := DecodeBatch(data)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := DecodeBatch(EncodeBatch(b))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("version 9 decodes as %+v; the lab's encoding as %+v", got, want)
		}
		// Read with no bound on the count, from the second record.
		l := newLog(t, Config{})
		if _, err := l.AppendEncoded(data, 1); err != nil {
			t.Fatal(err)
		}
		if got, err := l.Read(1, math.MaxInt); err != nil || len(got) != len(b.Records)-1 {
			t.Fatalf("Read(1, MaxInt) of a version 9 batch of %d: %d records, %v", len(b.Records), len(got), err)
		}
	}

	// What the file could not give back stays in the lab's encoding.
	ns := msRecs("ns", 2, ts+123)
	named := msRecs("named", 2, ts)
	named[1].Headers = append(named[1].Headers, Header{Key: MsgIDHeader, Value: []byte("x")})
	for name, b := range map[string]Batch{
		"a timestamp finer than a millisecond": {Records: ns},
		"a header named as the id's":           {Records: named},
		"no records":                           {},
	} {
		data := AppendProduceBatch(nil, b)
		if len(data) != ProduceBatchSize(b) || len(data) != BatchSize(b) || data[0] == batchVersionLab {
			t.Errorf("%s: version %d, %d bytes; want the lab's encoding, %d bytes", name, data[0], len(data), BatchSize(b))
		}
	}

	batches = batches[:3] // the files below hold one segment of ordinary times
	// Three replicas append the same entry; each file holds the leader's
	// batch with its base offset and epoch set, byte for byte the file a
	// replica writes from the lab's encoding of the same batches, so a
	// restart, a dump and a fetch read either alike.
	var entries [][]byte
	for _, b := range batches {
		entries = append(entries, AppendProduceBatch(nil, b))
	}
	labFile := func() []byte {
		dir := t.TempDir()
		l := newLog(t, Config{})
		if err := l.AttachDir(dir); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, Batch{Records: msRecs("first", 2, ts)}, 4)
		for _, b := range batches {
			mustAppend(t, l, b, 4)
		}
		l.DetachDir()
		data, err := os.ReadFile(filepath.Join(dir, SegmentFileName(0, LogSuffix)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}()
	for replica := range 3 {
		dir := t.TempDir()
		l := newLog(t, Config{})
		if err := l.AttachDir(dir); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, Batch{Records: msRecs("first", 2, ts)}, 4) // so the entries do not start at offset 0
		for _, e := range entries {
			if _, err := l.AppendEncoded(e, 4); err != nil {
				t.Fatalf("replica %d: %v", replica, err)
			}
		}
		l.NoteApplied(uint64(1 + len(entries))) // the raft index a restart starts from
		l.DetachDir()
		if data, err := os.ReadFile(filepath.Join(dir, SegmentFileName(0, LogSuffix))); err != nil || !bytes.Equal(data, labFile) {
			t.Errorf("replica %d: the .log file differs from one written from the lab's encoding (%v)", replica, err)
		}
		if back, _, err := Recover(Config{}, dir); err != nil || !reflect.DeepEqual(readAll(t, back), readAll(t, l)) {
			t.Errorf("replica %d: recovered from its folder, the log reads otherwise (%v)", replica, err)
		}
		file := readLogFile(t, filepath.Join(dir, SegmentFileName(0, LogSuffix)))
		if len(file) != 1+len(entries) {
			t.Fatalf("replica %d: %d batches in the file; want %d", replica, len(file), 1+len(entries))
		}
		base := int64(2)
		for i, e := range entries {
			fb := file[1+i]
			raw := KafkaBatchOf(asClient(e))
			if fb.kb.FirstOffset != base || fb.kb.PartitionLeaderEpoch != 4 {
				t.Errorf("replica %d, batch %d: base offset %d, epoch %d; want %d, 4", replica, i, fb.kb.FirstOffset, fb.kb.PartitionLeaderEpoch, base)
			}
			onDisk := fb.kb.AppendTo(nil)
			if !bytes.Equal(onDisk[8:12], raw[8:12]) || !bytes.Equal(onDisk[16:], raw[16:]) {
				t.Errorf("replica %d, batch %d: the file's bytes differ from the leader's beyond the base offset and epoch", replica, i)
			}
			for j, r := range fb.records {
				id := ""
				for _, h := range r.Headers {
					if h.Key == MsgIDHeader {
						id = string(h.Value)
					}
				}
				if id != batches[i].Records[j].MsgID || r.OffsetDelta != int32(j) {
					t.Errorf("replica %d, batch %d, record %d: id %q, offset delta %d; want %q, %d", replica, i, j, id, r.OffsetDelta, batches[i].Records[j].MsgID, j)
				}
			}
			base += int64(len(batches[i].Records))
		}
	}
}
