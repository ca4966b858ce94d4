package partlog

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

const compactT0 = int64(1_700_000_000e9)

// compactedLog writes, in 3- and 1-record batches (the first, third and
// fifth in Kafka's format, as a leader proposes them), segments of at most 4
// records: [0,3) [3,6) [6,10) closed, [10,11) active.
//
//	0 A=a0  1 B=b0  2 C=c0  |  3 A=a1  4 B=b1  5 D=d1  |
//	6 A=a2  7 C=null  8 E=e2  9 F=f3  |  10 A=a4 (active)
func compactedLog(t *testing.T, dir string) *Log {
	t.Helper()
	l := newLog(t, Config{SegmentRecords: 4, Compact: true, DeleteRetention: 10 * time.Second})
	if dir != "" {
		if err := l.AttachDir(dir); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(i int, key, value string) Record {
		r := Record{Timestamp: compactT0 + int64(i)*1e9, Key: []byte(key), MsgID: "p:" + key + value}
		if value != "" {
			r.Value = []byte(value)
		}
		return r
	}
	batches := [][]Record{
		{rec(0, "A", "a0"), rec(1, "B", "b0"), rec(2, "C", "c0")},
		{rec(3, "A", "a1"), rec(4, "B", "b1"), rec(5, "D", "d1")},
		{rec(6, "A", "a2"), rec(7, "C", ""), rec(8, "E", "e2")},
		{rec(9, "F", "f3")},
		{rec(10, "A", "a4")},
	}
	for i, b := range batches {
		// Every other batch as a leader proposes the lab's records, in
		// Kafka's format; the others in the lab's own encoding.
		if i%2 == 0 {
			if _, err := l.AppendEncoded(AppendProduceBatch(nil, Batch{Records: b}), 1); err != nil {
				t.Fatal(err)
			}
		} else {
			mustAppend(t, l, Batch{Records: b}, 1)
		}
		l.NoteApplied(uint64(i + 1))
	}
	return l
}

func offsetsOf(recs []Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Offset)
	}
	return out
}

func TestCompactKeepsTheNewestRecordOfEachKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l := compactedLog(t, dir)

	res, ok := l.Compact(compactT0 + 12e9)
	if !ok {
		t.Fatal("Compact did nothing")
	}
	want := CompactResult{From: 0, To: 10, SegmentsBefore: 3, SegmentsAfter: 2, RecordsBefore: 10, RecordsAfter: 6}
	if res != want {
		t.Fatalf("pass: %+v, want %+v", res, want)
	}
	// A at 6 stays: the active segment, where A=a4 is, is not read.
	// The tombstone of C at 7 is 5 s old, younger than 10 s.
	got := readAll(t, l)
	if o := offsetsOf(got); !equalInt64s(o, []int64{4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("offsets after the pass: %v", o)
	}
	if got[3].Value != nil || string(got[3].Key) != "C" || got[0].MsgID != "p:Bb1" {
		t.Fatalf("records after the pass: %+v", got)
	}
	// Offsets never change: a read from a gap starts at the next record,
	// the log still starts at 0, and the end is where it was.
	if r, err := l.Read(1, 1); err != nil || len(r) != 1 || r[0].Offset != 4 {
		t.Fatalf("Read(1) = %+v, %v; want the record at 4", r, err)
	}
	if l.StartOffset() != 0 || l.EndOffset() != 11 {
		t.Fatalf("start/end = %d/%d, want 0/11", l.StartOffset(), l.EndOffset())
	}
	if off, ok := l.OffsetForTime(compactT0 + 2e9); !ok || off != 4 {
		t.Fatalf("OffsetForTime(2 s) = %d, %v; want 4", off, ok)
	}
	segs := l.Segments()
	if len(segs) != 3 || segs[0].BaseOffset != 0 || segs[0].NextOffset != 6 || segs[0].Records != 2 ||
		segs[1].BaseOffset != 6 || segs[1].NextOffset != 10 || segs[1].Records != 4 || !segs[1].Closed {
		t.Fatalf("segments: %+v", segs)
	}

	// The files: Kafka's batches, the compacted one keeping its base
	// offset and last offset, its records their offset deltas.
	if err := l.SyncFiles(); err != nil {
		t.Fatal(err)
	}
	if b := segmentBases(t, dir); !equalInt64s(b, []int64{0, 6, 10}) {
		t.Fatalf("segment files %v, want 0, 6, 10", b)
	}
	fb := readLogFile(t, filepath.Join(dir, SegmentFileName(0, LogSuffix)))
	if len(fb) != 1 || fb[0].kb.FirstOffset != 3 || fb[0].kb.LastOffsetDelta != 2 || fb[0].kb.NumRecords != 2 ||
		fb[0].records[0].OffsetDelta != 1 || fb[0].records[1].OffsetDelta != 2 {
		t.Fatalf("segment 0's file: %+v", fb)
	}

	// A later pass, past the tombstone's 10 s: it goes.
	res, _ = l.Compact(compactT0 + 17e9 + 1)
	if res.Tombstones != 1 || res.RecordsAfter != 5 {
		t.Fatalf("second pass: %+v, want the tombstone gone and 5 records", res)
	}
	got = readAll(t, l)
	if o := offsetsOf(got); !equalInt64s(o, []int64{4, 5, 6, 8, 9, 10}) {
		t.Fatalf("offsets after the second pass: %v", o)
	}

	// Read back from the files after a stop, and from a snapshot: the
	// same records at the same offsets.
	l.DetachDir()
	back, rec, err := Recover(l.Config(), dir)
	if err != nil || !rec.Found || len(rec.Rebuilt) != 0 {
		t.Fatalf("Recover: %+v, %v; want the cleaner's index files taken as they are", rec, err)
	}
	sameRecords(t, readAll(t, back), got)
	if !equalSegments(back.Segments(), l.Segments()) {
		t.Fatalf("recovered segments %+v, want %+v", back.Segments(), l.Segments())
	}
	snap, err := ReadLog(bytes.NewReader(snapshotBytes(t, l)))
	if err != nil {
		t.Fatal(err)
	}
	assertSameLog(t, snap, l)
}

func equalSegments(a, b []SegmentInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].BaseOffset != b[i].BaseOffset || a[i].NextOffset != b[i].NextOffset || a[i].Records != b[i].Records || a[i].Closed != b[i].Closed {
			return false
		}
	}
	return true
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCompactedLogRefusesUnkeyedRecords(t *testing.T) {
	l := newLog(t, Config{Compact: true})
	_, err := l.Append(Batch{Records: []Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("no key")}}}, 1)
	if !errors.Is(err, ErrNoKey) || l.EndOffset() != 0 {
		t.Fatalf("unkeyed record: %v, end %d; want ErrNoKey and nothing written", err, l.EndOffset())
	}
	// An empty key is a key.
	mustAppend(t, l, Batch{Records: []Record{{Key: []byte{}, Value: []byte("v")}}}, 1)
	// A plain log keeps unkeyed records, and has nothing to compact.
	plain := newLog(t, Config{SegmentRecords: 1})
	appendEach(t, plain, []Record{{Value: []byte("x")}, {Value: []byte("y")}}, 1)
	if _, ok := plain.Compact(1 << 62); ok {
		t.Fatal("a log without Compact was compacted")
	}
}

func TestCompactedBatchIsNotAProduce(t *testing.T) {
	data := encodeCompacted([]Record{{Offset: 5, Key: []byte("k"), Value: []byte("v")}}, 4, 3, 0, 0, false)
	if _, err := DecodeBatch(data); err != nil {
		t.Fatalf("the compacted encoding does not parse: %v", err)
	}
	l := newLog(t, Config{Compact: true})
	if _, err := l.AppendEncoded(data, 1); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("AppendEncoded(compacted) = %v, want ErrInvalidBatch", err)
	}
	// Damaged offset deltas are found.
	bad := bytes.Clone(data)
	bad[4] = 7 // the only delta, now past the span of 3
	if _, err := DecodeBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a delta past the span: %v, want ErrCorrupt", err)
	}
}
