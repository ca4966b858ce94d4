package partlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// twinLogs are the same batches in a log kept in memory and in one with a
// folder, whose closed segments keep their bytes in their files only.
func twinLogs(t *testing.T, cfg Config) (mem, disk *Log, dir string) {
	t.Helper()
	mem, disk = newLog(t, cfg), newLog(t, cfg)
	dir = t.TempDir()
	if err := disk.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	return mem, disk, dir
}

// appendBoth appends the encoded batch data to both logs.
func appendBoth(t *testing.T, mem, disk *Log, data []byte, epoch uint64) {
	t.Helper()
	a, err1 := mem.AppendEncoded(bytes.Clone(data), epoch)
	b, err2 := disk.AppendEncoded(bytes.Clone(data), epoch)
	if err1 != nil || err2 != nil || a != b {
		t.Fatalf("append: %+v %v / %+v %v", a, err1, b, err2)
	}
}

// msRecs is recs with whole-millisecond timestamps, a record without a
// key, one with an empty value and one with headers, as the lab's
// producers and Kafka clients make them.
func msRecs(tag string, n int, ts0 int64) []Record {
	rs := recs(tag, n, 30, ts0)
	rs[0].Key = nil
	if n > 1 {
		rs[1].Value = []byte{}
		rs[1].Headers = []Header{{Key: "trace", Value: []byte("t1")}, {Key: "null", Value: nil}, {Key: "", Value: []byte{}}}
	}
	return rs
}

// What leaves memory is exactly what comes back from the files: a log
// whose closed segments were read back reads, searches by time and
// snapshots as the same log kept in memory does.
func TestClosedSegmentsLiveInTheirFiles(t *testing.T) {
	mem, disk, _ := twinLogs(t, Config{SegmentRecords: 6})
	ts := int64(1_700_000_000_000) * 1e6
	var kinds []string // what each batch is, in order
	seq, produced := int32(0), int32(0)
	for i := range 15 {
		switch i % 5 {
		case 0:
			appendBoth(t, mem, disk, EncodeBatch(Batch{Records: msRecs(fmt.Sprint("lab", i), 3, ts)}), uint64(1+i/5))
			kinds = append(kinds, "lab")
		case 1:
			appendBoth(t, mem, disk, EncodeBatch(Batch{ProducerID: 7, BaseSeq: seq, Records: msRecs(fmt.Sprint("idem", i), 2, ts)}), uint64(1+i/5))
			seq += 2
			kinds = append(kinds, "idempotent")
		case 2:
			raw := clientBatch(t, false, msRecs(fmt.Sprint("wire", i), 3, ts))
			kv, minTS, _ := wireInfo(raw)
			appendBoth(t, mem, disk, AppendWireBatch(nil, raw, kv, minTS), uint64(1+i/5))
			kinds = append(kinds, "client")
		case 3:
			// Nanoseconds the file cannot keep: this batch stays in memory.
			rs := msRecs(fmt.Sprint("ns", i), 2, ts+123)
			appendBoth(t, mem, disk, EncodeBatch(Batch{Records: rs}), uint64(1+i/5))
			kinds = append(kinds, "nanoseconds")
		case 4:
			// As a leader proposes the lab's records: in Kafka's format.
			appendBoth(t, mem, disk, AppendProduceBatch(nil, Batch{ProducerID: 8, BaseSeq: produced, Records: msRecs(fmt.Sprint("produced", i), 3, ts)}), uint64(1+i/5))
			produced += 3
			kinds = append(kinds, "produced")
		}
		ts += 1e9
	}

	closed, evicted := 0, 0
	k := 0
	for si, s := range disk.segs {
		for j := range s.batches {
			b, want := &s.batches[j], &mem.segs[si].batches[j]
			kind := kinds[k]
			k++
			if !s.closed {
				continue
			}
			closed++
			if kind == "nanoseconds" {
				if b.data == nil {
					t.Errorf("batch at offset %d (ns timestamps) left memory; its file keeps milliseconds only", b.base)
				}
				continue
			}
			if b.data != nil {
				t.Errorf("%s batch at offset %d of a closed segment is still in memory", kind, b.base)
				continue
			}
			evicted++
			got, err := readBatch(disk.segmentPath(s.base), b)
			if err != nil {
				t.Fatalf("read back offset %d: %v", b.base, err)
			}
			if kind == "client" || kind == "produced" {
				// Base offset and leader epoch are set in the file's header.
				if got[0] != want.data[0] {
					t.Errorf("%s batch at offset %d reads back in version %d, was appended in %d", kind, b.base, got[0], want.data[0])
				}
				got, wantRaw := KafkaBatchOf(asClient(got)), bytes.Clone(KafkaBatchOf(asClient(want.data)))
				copy(wantRaw[:8], got[:8])
				copy(wantRaw[12:16], got[12:16])
				if !bytes.Equal(got, wantRaw) {
					t.Errorf("client batch at offset %d reads back changed", b.base)
				}
				continue
			}
			if !bytes.Equal(got, want.data) {
				t.Errorf("%s batch at offset %d reads back as %x, was appended as %x", kind, b.base, got, want.data)
			}
		}
	}
	if closed == 0 || evicted < closed/2 {
		t.Fatalf("%d of %d batches in closed segments left memory", evicted, closed)
	}

	if !reflect.DeepEqual(readAll(t, disk), readAll(t, mem)) {
		t.Fatal("the records read differ")
	}
	for off := disk.StartOffset(); off < disk.EndOffset(); off++ {
		a, _ := disk.Read(off, 2)
		b, _ := mem.Read(off, 2)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("Read(%d, 2): %+v, want %+v", off, a, b)
		}
	}
	for _, q := range []int64{0, ts - 5e9, ts - 5e9 + 1, ts - 1e9, ts} {
		a, okA := disk.OffsetForTime(q)
		b, okB := mem.OffsetForTime(q)
		if a != b || okA != okB {
			t.Errorf("OffsetForTime(%d): %d %v, want %d %v", q, a, okA, b, okB)
		}
	}

	// A snapshot reads the files: plain, and through a store that keeps
	// the closed segments as sources.
	for _, w := range []interface {
		io.Writer
		stream() []byte
	}{&plainBuffer{}, &lazyBuffer{}} {
		snap := disk.Snapshot()
		if _, err := snap.WriteTo(w); err != nil {
			t.Fatalf("%T: WriteTo: %v", w, err)
		}
		back, err := ReadLog(bytes.NewReader(w.stream()))
		if err != nil {
			t.Fatalf("%T: ReadLog: %v", w, err)
		}
		if !reflect.DeepEqual(readAll(t, back), readAll(t, mem)) || !reflect.DeepEqual(back.Segments(), mem.Segments()) {
			t.Fatalf("%T: the snapshot reads back as another log", w)
		}
	}
}

// asClient is a version 9 batch relabelled version 6, the same envelope,
// for KafkaBatchOf.
func asClient(p []byte) []byte {
	if len(p) > 0 && p[0] == batchVersionLab {
		p = append([]byte{batchVersionKafka}, p[1:]...)
	}
	return p
}

type plainBuffer struct{ bytes.Buffer }

func (b *plainBuffer) stream() []byte { return b.Bytes() }

// lazyBuffer is a SharingWriter that, like the replicas' snapshot store,
// reads its sources (and computes its checksums) only when the stream is
// read.
type lazyBuffer struct {
	parts []func(w *bytes.Buffer) error
}

func (b *lazyBuffer) Write(p []byte) (int, error) {
	p = bytes.Clone(p)
	b.parts = append(b.parts, func(w *bytes.Buffer) error { w.Write(p); return nil })
	return len(p), nil
}

func (b *lazyBuffer) WriteShared(p []byte) (int, error) { return b.Write(p) }

func (b *lazyBuffer) WriteLater(n int, fill func(p []byte)) (int, error) {
	b.parts = append(b.parts, func(w *bytes.Buffer) error {
		p := make([]byte, n)
		fill(p)
		w.Write(p)
		return nil
	})
	return n, nil
}

func (b *lazyBuffer) WriteSource(n int, src func(w io.Writer) error) (int, error) {
	b.parts = append(b.parts, func(w *bytes.Buffer) error {
		at := w.Len()
		if err := src(w); err != nil {
			return err
		}
		if w.Len()-at != n {
			return fmt.Errorf("a source wrote %d bytes, announced %d", w.Len()-at, n)
		}
		return nil
	})
	return n, nil
}

func (b *lazyBuffer) stream() []byte {
	var w bytes.Buffer
	for _, p := range b.parts {
		if err := p(&w); err != nil {
			return []byte(err.Error())
		}
	}
	return w.Bytes()
}

// A snapshot taken before retention deletes segments, or compaction
// rewrites them, or the folder is attached afresh, still reads as the log
// it was taken of: their batches come into its memory before their files
// go.
func TestSnapshotOutlivesTheFilesItNames(t *testing.T) {
	for _, change := range []string{"retention", "compaction", "attach", "recover"} {
		t.Run(change, func(t *testing.T) {
			cfg := Config{SegmentRecords: 4, RetentionBytes: 1}
			if change == "compaction" {
				cfg = Config{SegmentRecords: 4, Compact: true}
			}
			_, l, dir := twinLogs(t, cfg)
			ts := int64(1_700_000_000_000) * 1e6
			for i := range 10 {
				rs := recs(fmt.Sprint("b", i%3), 2, 30, ts+int64(i)*1e9)
				mustAppend(t, l, Batch{Records: rs}, 1)
			}
			want := readAll(t, l)
			snap := l.Snapshot()
			lazy := &lazyBuffer{}
			if _, err := snap.WriteTo(lazy); err != nil {
				t.Fatal(err)
			}
			switch change {
			case "retention":
				if len(l.EnforceRetention(ts)) == 0 {
					t.Fatal("retention deleted nothing")
				}
			case "compaction":
				if _, ok := l.Compact(ts); !ok {
					t.Fatal("compaction did nothing")
				}
			case "attach":
				if err := l.AttachDir(dir); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(readAll(t, l), want) {
					t.Fatal("the log reads differently after its folder was written afresh")
				}
			case "recover":
				l.DetachDir()
				if _, _, err := TearLastWrite(dir); err != nil {
					t.Fatal(err)
				}
				if err := l.AttachDir(t.TempDir()); err != nil { // the old folder stays as it is
					t.Fatal(err)
				}
			}
			back, err := ReadLog(bytes.NewReader(lazy.stream()))
			if err != nil {
				t.Fatalf("the snapshot taken before the %s no longer reads: %v", change, err)
			}
			if !reflect.DeepEqual(readAll(t, back), want) {
				t.Fatalf("the snapshot taken before the %s reads as another log", change)
			}
		})
	}
}

// A log read back from its folder keeps its closed segments in the files
// too, and reads as the log that wrote them.
func TestRecoveredLogKeepsClosedSegmentsInFiles(t *testing.T) {
	cfg := Config{SegmentRecords: 4}
	_, l, dir := twinLogs(t, cfg)
	ts := int64(1_700_000_000_000) * 1e6
	for i := range 9 {
		mustAppend(t, l, Batch{Records: msRecs(fmt.Sprint("r", i), 2, ts+int64(i)*1e9)}, 1)
		l.NoteApplied(uint64(i + 1))
	}
	want := readAll(t, l)
	l.DetachDir()
	back, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found {
		t.Fatalf("Recover: %+v %v", rec, err)
	}
	in := 0
	for _, s := range back.segs[:len(back.segs)-1] {
		for j := range s.batches {
			if s.batches[j].data != nil {
				in++
			}
		}
	}
	if in > 0 {
		t.Errorf("%d batches of closed segments are in memory after recovery", in)
	}
	if got := readAll(t, back); !reflect.DeepEqual(got, want) {
		t.Fatalf("recovered records differ:\n got %+v\nwant %+v", got, want)
	}
}

// The direct way back from a segment file gives the bytes the way
// through a Batch gives, whatever the records' headers hold.
func TestEncodeFromKafkaMatchesTheBatchWay(t *testing.T) {
	ts := int64(1_700_000_000_123) * 1e6
	cases := map[string][]Record{
		"plain":                      msRecs("p", 5, ts),
		"no ids":                     {{Timestamp: ts, Key: []byte("k"), Value: []byte("v")}, {Timestamp: ts + 2e6, Value: nil}},
		"one":                        {{Timestamp: ts, Value: []byte{}, MsgID: "x:1"}},
		"headers":                    {{Timestamp: ts, Key: []byte{}, MsgID: "h:1", Headers: []Header{{Key: "", Value: []byte{}}, {Key: "n", Value: nil}}}, {Timestamp: ts - 5e6, MsgID: "h:2"}},
		"an id header of a client's": {{Timestamp: ts, Value: []byte("a"), Headers: []Header{{Key: MsgIDHeader, Value: []byte{}}, {Key: MsgIDHeader, Value: []byte("late")}}}},
	}
	for name, rs := range cases {
		for _, pid := range []int64{0, 42} {
			for i := range rs {
				rs[i].Offset = 700 + int64(i)
			}
			raw := appendKafkaBatch(nil, rs, 700, 700+int64(len(rs))-1, pid, 9, 3, false)
			kb, err := ParseKafkaBatch(raw)
			if err != nil {
				t.Fatal(err)
			}
			b, _, err := batchFromKafka(raw)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := EncodeBatch(b)
			got, ok := encodeFromKafka(raw, &kb)
			if !ok || !bytes.Equal(got, want) {
				t.Errorf("%s, pid %d: got %x (ok %v), want %x", name, pid, got, ok, want)
			}
		}
	}
}

// readBatch reads stored batch b from the segment file at path.
func readBatch(path string, b *batchRef) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw := make([]byte, b.fileLen)
	if _, err := f.ReadAt(raw, b.filePos); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", filepath.Base(path), b.filePos, err)
	}
	return fromRaw(raw, b)
}

// A snapshot nobody holds any more stops naming its files: the
// registry of pinned files empties once it is collected.
func TestPinsGoWithTheirSnapshots(t *testing.T) {
	_, l, dir := twinLogs(t, Config{SegmentRecords: 2})
	for i := range 8 {
		mustAppend(t, l, Batch{Records: recs("g", 2, 10, int64(i)*1e9)}, 1)
	}
	pinned := func() int {
		pins.Lock()
		defer pins.Unlock()
		n := 0
		for p, m := range pins.byPath {
			if filepath.Dir(p) == filepath.Clean(dir) {
				n += len(m)
			}
		}
		return n
	}
	snap := l.Snapshot()
	if n := pinned(); n == 0 {
		t.Fatal("a snapshot of closed segments in files pins none of them")
	}
	runtime.KeepAlive(snap)
	deadline := time.Now().Add(10 * time.Second)
	for pinned() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pins left after their snapshot was dropped", pinned())
		}
		runtime.GC()
		time.Sleep(time.Millisecond) // the collector's cleanups run on their own goroutine
	}
}

// A snapshot read into files goes to them segment by segment, its closed
// segments leaving memory as it goes, and takes the place of the folder
// a log was using.
func TestReadLogToDirWritesAsItReads(t *testing.T) {
	cfg := Config{SegmentRecords: 4}
	_, l, _ := twinLogs(t, cfg)
	ts := int64(1_700_000_000_000) * 1e6
	for i := range 9 {
		mustAppend(t, l, Batch{ProducerID: 5, BaseSeq: int32(2 * i), Records: msRecs(fmt.Sprint("s", i), 2, ts+int64(i)*1e9)}, 2)
	}
	want := readAll(t, l)
	var snap bytes.Buffer
	if _, err := l.WriteTo(&snap); err != nil {
		t.Fatal(err)
	}

	// Another log holds the folder meanwhile, as the replica's old one does.
	dir := t.TempDir()
	old := newLog(t, cfg)
	mustAppend(t, old, Batch{Records: msRecs("old", 3, ts)}, 1)
	if err := old.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLogToDir(bytes.NewReader(snap.Bytes()), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, old); len(got) != 3 {
		t.Fatalf("the log using the folder reads %d records while the snapshot is read beside it, want 3", len(got))
	}
	for _, s := range back.segs[:len(back.segs)-1] {
		for j := range s.batches {
			if s.batches[j].data != nil {
				t.Fatalf("a batch of the closed segment at %d is in memory after the read", s.base)
			}
		}
	}
	old.DetachDir()
	if err := back.MoveDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + RestoringSuffix); !os.IsNotExist(err) {
		t.Errorf("the folder the snapshot was read into is still there: %v", err)
	}
	if got := readAll(t, back); !reflect.DeepEqual(got, want) {
		t.Fatalf("the log read into files reads as another:\n got %+v\nwant %+v", got, want)
	}
	mustAppend(t, back, Batch{ProducerID: 5, BaseSeq: 18, Records: msRecs("after", 1, ts+20e9)}, 3)
	back.NoteApplied(100)
	want = readAll(t, back)
	back.DetachDir()
	again, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found {
		t.Fatalf("Recover: %+v %v", rec, err)
	}
	if got := readAll(t, again); !reflect.DeepEqual(got, want) {
		t.Fatal("the folder, read back, holds another log")
	}
}
