package partlog

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeLog appends batches of 3 records (every third one idempotent) to a
// log in dir, noting raft indexes 10, 20, …, and returns the log.
func writeLog(t *testing.T, dir string, cfg Config, batches int) *Log {
	t.Helper()
	l := newLog(t, cfg)
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	l.NoteApplied(1)
	seq := int32(0)
	for i := range batches {
		b := Batch{Records: recs("r", 3, 8, 1_700_000_000e9+int64(i)*1e9)}
		b.Records[0].Headers = []Header{{Key: "trace", Value: []byte("t")}}
		if i%3 == 0 {
			b.ProducerID, b.BaseSeq = 42, seq
			seq += 3
		}
		mustAppend(t, l, b, uint64(2+i/4))
		l.NoteApplied(uint64(10 * (i + 1)))
	}
	if err := l.FilesErr(); err != nil {
		t.Fatal(err)
	}
	return l
}

func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.Epoch != w.Epoch || g.Timestamp != w.Timestamp/1e6*1e6 || !bytes.Equal(g.Key, w.Key) ||
			!bytes.Equal(g.Value, w.Value) || g.MsgID != w.MsgID || len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestRecoverReadsTheFilesBack(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{SegmentRecords: 7, IndexIntervalBytes: 100}
	orig := writeLog(t, dir, cfg, 10)
	want := readAll(t, orig)
	orig.DetachDir()

	l, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found {
		t.Fatalf("Recover: %+v, %v", rec, err)
	}
	if rec.Applied != 100 || rec.Start != 0 || rec.End != 30 || rec.CutBytes != 0 || rec.Segments != len(orig.Segments()) {
		t.Fatalf("recovery %+v; want applied 100, offsets 0–30 in %d segments, nothing cut", rec, len(orig.Segments()))
	}
	sameRecords(t, readAll(t, l), want)
	// The idempotent producer is known again: a retry of its last batch is
	// a duplicate, its next batch continues.
	retry := Batch{ProducerID: 42, BaseSeq: 9, Records: recs("r", 3, 8, 0)}
	if res, err := l.Append(retry, 5); err != nil || !res.Duplicate || res.BaseOffset != 27 {
		t.Fatalf("retry after recovery: %+v, %v", res, err)
	}
	// Appends go on in the same files, indexed as if nothing had happened.
	mustAppend(t, l, Batch{Records: recs("s", 2, 8, 1_800_000_000e9)}, 5)
	l.NoteApplied(110)
	l.DetachDir()
	all := readAll(t, l)
	next := int64(0)
	for _, base := range segmentBases(t, dir) {
		batches := readLogFile(t, filepath.Join(dir, SegmentFileName(base, LogSuffix)))
		for _, b := range batches {
			if b.kb.FirstOffset != next {
				t.Fatalf("segment %d: batch at %d, want %d", base, b.kb.FirstOffset, next)
			}
			next += int64(b.kb.NumRecords)
		}
		checkIndexes(t, dir, base, batches)
	}
	if next != 32 || len(all) != 32 {
		t.Fatalf("files hold up to %d, the log %d records; want 32", next, len(all))
	}
	if _, rec, _ := Recover(cfg, dir); !rec.Found || rec.Applied != 110 || len(rec.Rebuilt) != 0 {
		t.Fatalf("second recovery: %+v; want entry 110 and every index file as written", rec)
	}
}

func TestRecoverCutsATornBatch(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{SegmentRecords: 100}
	orig := writeLog(t, dir, cfg, 4)
	want := readAll(t, orig)[:9]
	orig.DetachDir()
	path := filepath.Join(dir, SegmentFileName(0, LogSuffix))
	data, _ := os.ReadFile(path)
	batches := readLogFile(t, path)
	lastPos := batches[len(batches)-1].pos
	// The last write stopped 37 bytes into its batch.
	if err := os.WriteFile(path, data[:lastPos+37], 0o644); err != nil {
		t.Fatal(err)
	}
	l, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found {
		t.Fatalf("Recover: %+v, %v", rec, err)
	}
	if rec.CutBytes != 37 || rec.CutOffset != 9 || rec.End != 9 || rec.Applied != 30 {
		t.Fatalf("recovery %+v; want 37 bytes cut at offset 9 and the entry before it (30) applied", rec)
	}
	sameRecords(t, readAll(t, l), want)
	if fi, _ := os.Stat(path); fi.Size() != lastPos {
		t.Fatalf("the file is %d bytes after recovery, want %d (cut at the last whole batch)", fi.Size(), lastPos)
	}
	l.DetachDir()

	// Cut again, the files fall behind both checkpoint pairs: recovery
	// cannot say which entry they end at, so it refuses them.
	data, _ = os.ReadFile(path)
	data[len(data)-3] ^= 0x40
	os.WriteFile(path, data, 0o644)
	if _, rec, _ := Recover(cfg, dir); rec.Found {
		t.Fatalf("a second cut: %+v; want the files refused", rec)
	}

	// A flipped byte in the last batch fails its CRC: it is cut like a
	// torn one.
	dir = t.TempDir()
	writeLog(t, dir, cfg, 4).DetachDir()
	path = filepath.Join(dir, SegmentFileName(0, LogSuffix))
	data, _ = os.ReadFile(path)
	data[len(data)-3] ^= 0x40
	os.WriteFile(path, data, 0o644)
	if _, rec, _ := Recover(cfg, dir); !rec.Found || rec.End != 9 || rec.Applied != 30 || rec.CutBytes != int64(len(data))-lastPos {
		t.Fatalf("after a flipped byte: %+v; want the last batch cut, back to entry 30", rec)
	}
}

func TestRecoverRefusesWhatItCannotTrust(t *testing.T) {
	cfg := Config{SegmentRecords: 5}
	empty := t.TempDir()
	if l, rec, err := Recover(cfg, empty); err != nil || rec.Found || l.EndOffset() != 0 {
		t.Fatalf("an empty folder: %+v, %v", rec, err)
	}
	dir := t.TempDir()
	writeLog(t, dir, cfg, 4).DetachDir()
	// Two batches cut off: neither checkpoint pair matches the files.
	bases := segmentBases(t, dir)
	last := filepath.Join(dir, SegmentFileName(bases[len(bases)-1], LogSuffix))
	os.WriteFile(last, nil, 0o644)
	os.Remove(filepath.Join(dir, SegmentFileName(bases[len(bases)-2], LogSuffix)))
	if l, rec, err := Recover(cfg, dir); err != nil || rec.Found || l.EndOffset() != 0 || l.Dir() != "" {
		t.Fatalf("files behind their checkpoint: %+v, %v", rec, err)
	}
	if got := segmentBases(t, dir); !slices.Contains(got, 0) {
		t.Fatalf("a refused recovery changed the folder: %v", got)
	}
}

func TestTearLastWriteThenRecover(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{SegmentRecords: 6}
	writeLog(t, dir, cfg, 5).DetachDir() // segments 0–5, 6–11, 12–14
	torn, ok, err := TearLastWrite(dir)
	if err != nil || !ok || torn.Segment != 12 || torn.BaseOffset != 12 || torn.LastOffset != 14 || torn.Kept != torn.Size/2 {
		t.Fatalf("TearLastWrite: %+v, %v, %v", torn, ok, err)
	}
	_, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found || rec.CutBytes != torn.Kept || rec.CutOffset != 12 || rec.End != 12 || rec.Applied != 40 {
		t.Fatalf("recovery after the tear: %+v, %v; want %d bytes cut at 12, back to entry 40", rec, err, torn.Kept)
	}
	if _, ok, _ := TearLastWrite(t.TempDir()); ok {
		t.Fatal("tore a batch in an empty folder")
	}
}

func TestRecoverRebuildsDamagedIndexesOfClosedSegments(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{SegmentRecords: 7, IndexIntervalBytes: 100}
	writeLog(t, dir, cfg, 10).DetachDir() // segments of 2 batches: 0, 6, 12, 18, 24 (active)
	bases := segmentBases(t, dir)
	if len(bases) < 4 {
		t.Fatalf("segments %v; want at least 4", bases)
	}
	path := func(base int64, suffix string) string { return filepath.Join(dir, SegmentFileName(base, suffix)) }
	orig := map[string][]byte{}
	for _, b := range bases[:len(bases)-1] {
		for _, suffix := range []string{IndexSuffix, TimeIndexSuffix} {
			data, err := os.ReadFile(path(b, suffix))
			if err != nil || len(data) == 0 {
				t.Fatalf("closed segment %d has no %s to damage: %v", b, suffix, err)
			}
			orig[path(b, suffix)] = data
		}
	}
	// A cut index, a flipped timestamp, a lost file; the fourth segment
	// is left alone.
	os.WriteFile(path(bases[0], IndexSuffix), orig[path(bases[0], IndexSuffix)][:5], 0o644)
	ti := bytes.Clone(orig[path(bases[1], TimeIndexSuffix)])
	ti[6] ^= 0x10
	os.WriteFile(path(bases[1], TimeIndexSuffix), ti, 0o644)
	os.Remove(path(bases[2], IndexSuffix))

	l, rec, err := Recover(cfg, dir)
	if err != nil || !rec.Found || rec.End != 30 {
		t.Fatalf("Recover: %+v, %v", rec, err)
	}
	want := []struct {
		seg     int64
		suffix  string
		problem string
	}{
		{bases[0], IndexSuffix, "it was 5 bytes long, not a whole number of 8-byte entries"},
		{bases[1], TimeIndexSuffix, "entry 1 of 1 was (time "},
		{bases[2], IndexSuffix, "it was missing"},
	}
	if len(rec.Rebuilt) != len(want) {
		t.Fatalf("rebuilt %+v; want %d files", rec.Rebuilt, len(want))
	}
	for i, w := range want {
		got := rec.Rebuilt[i]
		if got.Segment != w.seg || got.File != SegmentFileName(w.seg, w.suffix) || !strings.HasPrefix(got.Problem, w.problem) {
			t.Errorf("rebuild %d: %+v; want %s of segment %d: %q…", i, got, w.suffix, w.seg, w.problem)
		}
	}
	for p, data := range orig {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
			t.Errorf("%s after recovery: % x; want it as written, % x", filepath.Base(p), got, data)
		}
	}
	l.DetachDir()
	if _, rec, _ := Recover(cfg, dir); !rec.Found || len(rec.Rebuilt) != 0 {
		t.Fatalf("a second recovery: %+v; want nothing left to rebuild", rec)
	}
}

// A batch whose records lie further apart than either lies from 1970
// (which Kafka's millisecond deltas hold) reads back from its file after
// a restart, as the records around it do.
func TestRecoverKeepsRecordsFarApartInTime(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, Config{})
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	for i, b := range []Batch{
		{Records: []Record{{Value: []byte("before"), Timestamp: 1e15}}},
		{Records: []Record{{Value: []byte("early"), Timestamp: -5e18}, {Value: []byte("late"), Timestamp: 5e18}}},
		{Records: []Record{{Value: []byte("after"), Timestamp: 1e15}}},
	} {
		mustAppend(t, l, b, 1)
		l.NoteApplied(uint64(i + 1))
	}
	l.DetachDir()
	back, rec, err := Recover(Config{}, dir)
	if err != nil || !rec.Found || back.EndOffset() != 4 {
		t.Fatalf("Recover: %+v, %v; end %d, want 4", rec, err, back.EndOffset())
	}
	if got := readAll(t, back); got[1].Timestamp != -5e18 || got[2].Timestamp != 5e18 {
		t.Fatalf("recovered: %+v", got)
	}
}
