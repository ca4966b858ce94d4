package partlog

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A fetch's file range is whole batches of one segment file, from the
// one holding the offset asked for, at least one and as many as fit; its
// bytes are the file's, batches still in memory written out first.
func TestFileRangeServesWholeBatches(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, Config{SegmentRecords: 6})
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := l.FileRange(0, 1<<20); ok {
		t.Error("a range of an empty log")
	}
	for i := range 4 { // batches of 3: offsets 0-2 and 3-5 in the first segment, 6-8 and 9-11 in the second
		mustAppend(t, l, Batch{Records: recs(string(rune('a'+i)), 3, 20, 1e15)}, 2)
	}
	read := func(r FileRange) []byte {
		t.Helper()
		defer r.File.Close()
		p := make([]byte, r.Len)
		if _, err := r.File.ReadAt(p, r.Pos); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		offset, max       int64
		first, next, base int64
		batches           int
	}{
		{4, 1 << 20, 3, 6, 0, 1},   // inside the second batch: from its start, and not past the segment
		{0, 1 << 20, 0, 6, 0, 2},   // the whole first segment
		{0, 10, 0, 3, 0, 1},        // at least one batch, however small the limit
		{10, 1 << 20, 9, 12, 6, 1}, // the active segment, its batches written out first
	} {
		r, ok, err := l.FileRange(tc.offset, int(tc.max))
		if !ok || err != nil || r.First != tc.first || r.Next != tc.next {
			t.Fatalf("range at %d: %+v %v %v; want offsets %d to %d", tc.offset, r, ok, err, tc.first, tc.next)
		}
		got := read(r)
		file, _ := os.ReadFile(filepath.Join(dir, SegmentFileName(tc.base, LogSuffix)))
		if !bytes.Equal(got, file[r.Pos:r.Pos+r.Len]) {
			t.Fatalf("range at %d is not the file's bytes", tc.offset)
		}
		n := 0
		for p := got; len(p) > 0; n++ {
			kb, err := ParseKafkaBatch(p)
			if err != nil || !kb.CRCValid || (n == 0 && kb.BaseOffset != tc.first) {
				t.Fatalf("range at %d, batch %d: %+v %v", tc.offset, n, kb, err)
			}
			p = p[kb.Size():]
		}
		if n != tc.batches {
			t.Errorf("range at %d holds %d batches; want %d", tc.offset, n, tc.batches)
		}
	}
	if _, ok, _ := l.FileRange(12, 1<<20); ok {
		t.Error("a range at the log's end")
	}
	l.NoteApplied(4)
	l.DetachDir()
	if _, ok, _ := l.FileRange(0, 1<<20); ok {
		t.Error("a range of a log without files")
	}
	// A log read back from its files knows where its batches are.
	back, _, err := Recover(Config{SegmentRecords: 6}, dir)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := back.FileRange(4, 1<<20)
	if !ok || err != nil || r.First != 3 || r.Pos == 0 {
		t.Fatalf("range at 4 after a restart: %+v %v %v", r, ok, err)
	}
	r.File.Close()
	back.DetachDir()
}
