package partlog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAppendAssignsContiguousOffsetsAndEpochs(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 4})
	var want []Record
	for i, epoch := range []uint64{1, 1, 2, 3} {
		b := Batch{Records: recs("b", 3, 10, int64(i)*100e9)}
		res := mustAppend(t, l, b, epoch)
		if res.BaseOffset != int64(i*3) || res.Count != 3 || res.Duplicate {
			t.Fatalf("batch %d: got %+v, want base %d count 3", i, res, i*3)
		}
		for j, r := range b.Records {
			if r.Offset != 0 || r.Epoch != 0 {
				t.Fatalf("Append modified the caller's record %d: %+v", j, r)
			}
			r.Offset, r.Epoch = int64(i*3+j), epoch
			want = append(want, r)
		}
	}
	if got := readAll(t, l); !reflect.DeepEqual(got, want) {
		t.Fatalf("records differ:\n got %+v\nwant %+v", got, want)
	}
	if l.StartOffset() != 0 || l.EndOffset() != 12 {
		t.Fatalf("start/end = %d/%d, want 0/12", l.StartOffset(), l.EndOffset())
	}
	if got, want := l.Size(), int64(12*10+len("b-k0")*3*4); got != want {
		t.Fatalf("Size = %d, want %d", got, want)
	}
	// Every single offset through the index path, and reads spanning segments.
	for off := int64(0); off < 12; off++ {
		got, err := l.Read(off, 5)
		if err != nil {
			t.Fatal(err)
		}
		wantN := min(5, int(12-off))
		if len(got) != wantN || got[0].Offset != off || got[len(got)-1].Offset != off+int64(wantN)-1 {
			t.Fatalf("Read(%d, 5) returned offsets %d..%d (%d records)", off, got[0].Offset, got[len(got)-1].Offset, len(got))
		}
	}
}

func TestAppendRejectsEmptyBatch(t *testing.T) {
	l := newLog(t, Config{})
	_, err := l.Append(Batch{}, 1)
	if !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("empty batch: got %v, want ErrInvalidBatch", err)
	}
	if l.EndOffset() != 0 {
		t.Fatalf("end moved to %d", l.EndOffset())
	}
}

func TestSegmentsRollByRecords(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 16})
	appendEach(t, l, recs("r", 40, 5, 0), 1)
	segs := l.Segments()
	want := [][3]int64{{0, 16, 1}, {16, 32, 1}, {32, 40, 0}} // base, next, closed
	if len(segs) != len(want) {
		t.Fatalf("got %d segments %+v, want %d", len(segs), segs, len(want))
	}
	for i, s := range segs {
		closed := int64(0)
		if s.Closed {
			closed = 1
		}
		if got := [3]int64{s.BaseOffset, s.NextOffset, closed}; got != want[i] || s.Records != int(s.NextOffset-s.BaseOffset) {
			t.Fatalf("segment %d: %+v, want base/next/closed %v", i, s, want[i])
		}
	}
	// Lazy rolling: a full active segment stays active until the next record.
	l2 := newLog(t, Config{SegmentRecords: 4})
	mustAppend(t, l2, Batch{Records: recs("r", 4, 5, 0)}, 1)
	if s := l2.Segments(); len(s) != 1 || s[0].Closed {
		t.Fatalf("after exactly 4 records: %+v, want one active segment", s)
	}
}

func TestSegmentsHoldWholeBatches(t *testing.T) {
	// Like Kafka, a batch never spans segments: the active segment rolls
	// before a batch that would take it past the limit.
	l := newLog(t, Config{SegmentRecords: 16})
	for range 4 {
		mustAppend(t, l, Batch{Records: recs("h", 10, 5, 0)}, 1)
	}
	for i, s := range l.Segments() {
		if s.Records != 10 || s.Batches != 1 || s.BaseOffset != int64(10*i) {
			t.Fatalf("segment %d: %+v, want one batch of 10 records at %d", i, s, 10*i)
		}
	}
	// Batches that fit share a segment: 5 + 5 + 5 = 15, then 5 more rolls.
	l2 := newLog(t, Config{SegmentRecords: 16})
	for range 4 {
		mustAppend(t, l2, Batch{Records: recs("h", 5, 5, 0)}, 1)
	}
	if s := l2.Segments(); len(s) != 2 || s[0].Records != 15 || s[0].Batches != 3 || s[1].Records != 5 {
		t.Fatalf("segments %+v, want 15 records in 3 batches, then 5", s)
	}
	// A batch bigger than the limit gets a segment to itself, whole.
	l3 := newLog(t, Config{SegmentRecords: 16})
	mustAppend(t, l3, Batch{Records: recs("h", 1, 5, 0)}, 1)
	mustAppend(t, l3, Batch{Records: recs("h", 40, 5, 0)}, 1)
	mustAppend(t, l3, Batch{Records: recs("h", 1, 5, 0)}, 1)
	want := [][2]int64{{0, 1}, {1, 41}, {41, 42}}
	segs := l3.Segments()
	if len(segs) != len(want) {
		t.Fatalf("got %d segments %+v, want %d", len(segs), segs, len(want))
	}
	for i, s := range segs {
		if s.BaseOffset != want[i][0] || s.NextOffset != want[i][1] || s.Batches != 1 {
			t.Fatalf("segment %d: %+v, want [%d, %d) in one batch", i, s, want[i][0], want[i][1])
		}
	}
	// Every record of a batch carries the batch's epoch.
	for _, r := range readAll(t, l3) {
		if r.Epoch != 1 {
			t.Fatalf("record %d has epoch %d", r.Offset, r.Epoch)
		}
	}
}

func TestSegmentsRollByBytes(t *testing.T) {
	l := newLog(t, Config{SegmentBytes: 100})
	// Key "x-kN" is 4 bytes, value 26: 30 bytes a record, so 3 fit in 100.
	appendEach(t, l, recs("x", 10, 26, 0), 1)
	for i, s := range l.Segments() {
		if s.Bytes > 100 {
			t.Fatalf("segment %d holds %d bytes, limit 100", i, s.Bytes)
		}
		if s.Closed && s.Records != 3 {
			t.Fatalf("closed segment %d has %d records, want 3: %+v", i, s.Records, s)
		}
	}
	if n := len(l.Segments()); n != 4 {
		t.Fatalf("got %d segments, want 4", n)
	}
	// A record larger than the limit gets a segment to itself.
	big := recs("y", 1, 500, 0)
	mustAppend(t, l, Batch{Records: big}, 1)
	mustAppend(t, l, Batch{Records: recs("z", 1, 1, 0)}, 1)
	segs := l.Segments()
	if s := segs[len(segs)-2]; s.Records != 1 || s.Bytes != 504 {
		t.Fatalf("oversized record's segment: %+v", s)
	}
}

func TestDefaultsAndZeroLog(t *testing.T) {
	var l Log // the zero Log is usable
	if l.StartOffset() != 0 || l.EndOffset() != 0 || l.Size() != 0 {
		t.Fatal("zero Log is not empty")
	}
	if got, err := l.Read(0, 10); err != nil || len(got) != 0 {
		t.Fatalf("Read(0) on the zero Log: %v, %v", got, err)
	}
	if got := l.Window(0, 10); got != nil {
		t.Fatalf("Window on zero Log: %v", got)
	}
	if _, ok := l.OffsetForTime(0); ok {
		t.Fatal("OffsetForTime found a record in an empty log")
	}
	if got := l.EnforceRetention(0); got != nil {
		t.Fatalf("retention on zero Log deleted %v", got)
	}
	appendEach(t, &l, recs("z", 20, 1, 0), 1)
	if got := l.Config(); got.SegmentRecords != 16 || got.IndexIntervalBytes != 64 {
		t.Fatalf("defaults: %+v", got)
	}
	if s := l.Segments(); len(s) != 2 || s[0].Records != 16 {
		t.Fatalf("zero Log segments: %+v", s)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	bad := Config{SegmentRecords: -1, SegmentBytes: -2, RetentionAge: -3, RetentionBytes: -4, IndexIntervalBytes: -5}
	err := bad.Validate()
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig", err)
	}
	for _, field := range []string{"SegmentRecords", "SegmentBytes", "RetentionAge", "RetentionBytes", "IndexIntervalBytes"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	if _, err := New(bad); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New(bad): %v", err)
	}
}

func TestReadOutOfRange(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 5})
	mustAppend(t, l, Batch{Records: recs("r", 12, 1, 0)}, 1)

	if got, err := l.Read(12, 10); err != nil || len(got) != 0 {
		t.Fatalf("Read at the end: %v, %v; want nothing and no error", got, err)
	}
	_, err := l.Read(13, 1)
	if !errors.Is(err, ErrOffsetOutOfRange) || !strings.Contains(err.Error(), "[0, 12]") || !strings.Contains(err.Error(), "beyond") {
		t.Fatalf("Read beyond end: %v", err)
	}
	_, err = l.Read(-1, 1)
	if !errors.Is(err, ErrOffsetOutOfRange) || !strings.Contains(err.Error(), "[0, 12]") || !strings.Contains(err.Error(), "below") {
		t.Fatalf("Read below start: %v", err)
	}
	if got, _ := l.Read(3, 0); len(got) != 1 || got[0].Offset != 3 {
		t.Fatalf("Read with max 0 should return one record, got %+v", got)
	}
	if got, _ := l.Read(3, 1<<60); len(got) != 9 {
		t.Fatalf("Read with huge max returned %d records, want 9", len(got))
	}
}

func TestWindowClamps(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 3, RetentionBytes: 1})
	appendEach(t, l, recs("w", 10, 1, 0), 1)
	l.EnforceRetention(0) // keeps only the active segment: offsets 9..9
	for _, tc := range []struct {
		from      int64
		n         int
		wantFirst int64
		wantLen   int
	}{
		{0, 5, 9, 1}, {-100, 1, 9, 1}, {9, 5, 9, 1}, {10, 5, 0, 0}, {1 << 62, 5, 0, 0}, {9, 0, 0, 0}, {9, -1, 0, 0},
	} {
		got := l.Window(tc.from, tc.n)
		if len(got) != tc.wantLen || (tc.wantLen > 0 && got[0].Offset != tc.wantFirst) {
			t.Errorf("Window(%d, %d) = %+v, want %d records from %d", tc.from, tc.n, got, tc.wantLen, tc.wantFirst)
		}
	}
}

func TestSparseIndexesArePopulated(t *testing.T) {
	// 100-byte values with the default 64-byte interval: every batch (here
	// of one record) after a segment's first gets an offset index entry.
	l := newLog(t, Config{SegmentRecords: 16})
	appendEach(t, l, recs("i", 40, 100, 0), 1)
	for i, s := range l.Segments() {
		if want := s.Records - 1; s.IndexEntries != want {
			t.Errorf("segment %d: %d index entries, want %d", i, s.IndexEntries, want)
		}
		if s.TimeIndexEntries == 0 {
			t.Errorf("segment %d: empty time index", i)
		}
	}
	// A large interval leaves the index empty; reads still work from the
	// implicit (0, 0) entry.
	l2 := newLog(t, Config{SegmentRecords: 100, IndexIntervalBytes: 1 << 20})
	appendEach(t, l2, recs("j", 50, 100, 0), 1)
	if s := l2.Segments()[0]; s.IndexEntries != 0 {
		t.Fatalf("index entries with a 1 MiB interval: %d", s.IndexEntries)
	}
	if got, err := l2.Read(37, 2); err != nil || got[0].Offset != 37 || got[1].Offset != 38 {
		t.Fatalf("Read(37) without index entries: %+v, %v", got, err)
	}
	// Index entries point at batches: 10 batches of 7 records in a segment,
	// then every read lands inside a batch and starts at the right record.
	l3 := newLog(t, Config{SegmentRecords: 1000})
	var want []Record
	for i := range 10 {
		b := recs("k", 7, 20, int64(i)*7e9)
		res := mustAppend(t, l3, Batch{Records: b}, uint64(i+1))
		for j, r := range b {
			r.Offset, r.Epoch = res.BaseOffset+int64(j), uint64(i+1)
			want = append(want, r)
		}
	}
	if s := l3.Segments()[0]; s.Batches != 10 || s.IndexEntries != 9 || s.TimeIndexEntries != 9 {
		t.Fatalf("segment %+v, want 10 batches, 9 index and 9 time index entries", s)
	}
	for off := range int64(70) {
		for _, n := range []int{1, 3, 7, 20} {
			got, err := l3.Read(off, n)
			if err != nil || !reflect.DeepEqual(got, want[off:min(70, off+int64(n))]) {
				t.Fatalf("Read(%d, %d) = %+v, %v", off, n, got, err)
			}
		}
	}
}

// TestAgainstModel runs random appends, reads and retention against a plain
// slice of records.
func TestAgainstModel(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 7, SegmentBytes: 300, RetentionBytes: 2000, IndexIntervalBytes: 50})
	var model []Record
	seed := uint64(1)
	rnd := func(n int) int { seed = seed*6364136223846793005 + 1442695040888963407; return int(seed>>33) % n }
	for step := range 2000 {
		switch rnd(10) {
		case 0:
			l.EnforceRetention(0)
			start := l.StartOffset()
			for len(model) > 0 && model[0].Offset < start {
				model = model[1:]
			}
		default:
			b := Batch{Records: recs("m", 1+rnd(5), rnd(80), int64(rnd(1000)))}
			res := mustAppend(t, l, b, uint64(step))
			for i, r := range b.Records {
				r.Offset, r.Epoch = res.BaseOffset+int64(i), uint64(step)
				model = append(model, r)
			}
		}
		if len(model) > 0 {
			off := model[rnd(len(model))].Offset
			n := 1 + rnd(20)
			got, err := l.Read(off, n)
			if err != nil {
				t.Fatal(err)
			}
			i := int(off - model[0].Offset)
			want := model[i:min(len(model), i+n)]
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: Read(%d, %d) differs from the model", step, off, n)
			}
		}
	}
	if !reflect.DeepEqual(readAll(t, l), model) {
		t.Fatal("final contents differ from the model")
	}
	var size int64
	for _, r := range model {
		size += recordBytes(&r)
	}
	if l.Size() != size {
		t.Fatalf("Size = %d, model says %d", l.Size(), size)
	}
}
