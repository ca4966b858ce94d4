package partlog

import (
	"errors"
	"testing"
	"time"
)

func TestRetentionByAge(t *testing.T) {
	const sec = int64(time.Second)
	l := newLog(t, Config{SegmentRecords: 4, RetentionAge: time.Hour})
	// 10 records one second apart from t=0: segments [0,4) [4,8) [8,10).
	appendEach(t, l, recs("a", 10, 10, 0), 1)

	if got := l.EnforceRetention(3*sec + int64(time.Hour)); got != nil {
		t.Fatalf("nothing is older than an hour yet, deleted %+v", got)
	}
	// Segment 0's newest record is at 3s; at 3s+1h+1 it is over an hour old.
	got := l.EnforceRetention(3*sec + int64(time.Hour) + 1)
	if len(got) != 1 || got[0].BaseOffset != 0 || got[0].NextOffset != 4 || !got[0].Closed {
		t.Fatalf("deleted %+v, want segment [0,4)", got)
	}
	if l.StartOffset() != 4 {
		t.Fatalf("start = %d, want 4", l.StartOffset())
	}
	// Far in the future: every closed segment goes, the active one stays.
	got = l.EnforceRetention(1 << 62)
	if len(got) != 1 || got[0].BaseOffset != 4 {
		t.Fatalf("deleted %+v, want segment [4,8)", got)
	}
	segs := l.Segments()
	if len(segs) != 1 || segs[0].Closed || segs[0].BaseOffset != 8 {
		t.Fatalf("remaining %+v, want only the active segment at 8", segs)
	}
	if l.StartOffset() != 8 || l.EndOffset() != 10 || l.Size() != 2*(10+4) {
		t.Fatalf("start/end/size = %d/%d/%d", l.StartOffset(), l.EndOffset(), l.Size())
	}
	if _, err := l.Read(7, 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read below start after retention: %v", err)
	}
	if got, err := l.Read(8, 10); err != nil || len(got) != 2 {
		t.Fatalf("Read(8): %d records, %v", len(got), err)
	}
	// Extreme now values must not overflow into deleting anything.
	l2 := newLog(t, Config{SegmentRecords: 1, RetentionAge: time.Hour})
	appendEach(t, l2, recs("b", 3, 1, 0), 1)
	if got := l2.EnforceRetention(-1 << 63); got != nil {
		t.Fatalf("now = MinInt64 deleted %+v", got)
	}
}

func TestRetentionStopsAtFirstYoungSegment(t *testing.T) {
	// Timestamps are not monotonic: a young segment protects the old ones
	// after it, because only a prefix of the log can be deleted.
	l := newLog(t, Config{SegmentRecords: 1, RetentionAge: time.Second})
	for _, ts := range []int64{0, 100e9, 0, 0} {
		mustAppend(t, l, Batch{Records: []Record{{Timestamp: ts, Value: []byte("v")}}}, 1)
	}
	got := l.EnforceRetention(50e9)
	if len(got) != 1 || l.StartOffset() != 1 {
		t.Fatalf("deleted %+v, start %d; want only [0,1)", got, l.StartOffset())
	}
}

func TestRetentionBySize(t *testing.T) {
	// 10 records of 10 bytes (key "s-kN" 4 + value 6), 3 per segment:
	// [0,3) [3,6) [6,9) closed, 30 bytes each, [9,10) active with 10.
	l := newLog(t, Config{SegmentRecords: 3, RetentionBytes: 45})
	appendEach(t, l, recs("s", 10, 6, 0), 1)
	if l.Size() != 100 {
		t.Fatalf("size %d, want 100", l.Size())
	}
	// Kafka's rule: delete while size - segment >= limit.
	// 100-30=70 >= 45 yes; 70-30=40 >= 45 no.
	got := l.EnforceRetention(0)
	if len(got) != 1 || got[0].BaseOffset != 0 {
		t.Fatalf("deleted %+v, want [0,3)", got)
	}
	if l.Size() != 70 || l.StartOffset() != 3 {
		t.Fatalf("size/start = %d/%d, want 70/3", l.Size(), l.StartOffset())
	}
	if got := l.EnforceRetention(0); got != nil {
		t.Fatalf("second pass deleted %+v", got)
	}
	if _, err := l.Read(2, 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read(2) after retention: %v", err)
	}

	// The active segment never goes, however small the limit.
	l2 := newLog(t, Config{SegmentRecords: 3, RetentionBytes: 1})
	appendEach(t, l2, recs("s", 10, 6, 0), 1)
	if got := l2.EnforceRetention(0); len(got) != 3 {
		t.Fatalf("deleted %d segments, want all 3 closed ones", len(got))
	}
	if segs := l2.Segments(); len(segs) != 1 || segs[0].Closed || segs[0].Records != 1 {
		t.Fatalf("left %+v", segs)
	}
}

func TestRetentionAgeThenSize(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 2, RetentionAge: time.Minute, RetentionBytes: 25})
	// 8 records of 10 bytes one second apart: 4 segments of 20 bytes.
	appendEach(t, l, recs("q", 8, 6, 0), 1)
	// At now = 62s, only segment [0,2) (newest at 1s) is over a minute old;
	// then size: 60 left, 60-20=40 >= 25 deletes [2,4); 40-20=20 < 25 stops.
	got := l.EnforceRetention(62e9)
	if len(got) != 2 || l.StartOffset() != 4 || l.Size() != 40 {
		t.Fatalf("deleted %+v, start %d, size %d", got, l.StartOffset(), l.Size())
	}
}
