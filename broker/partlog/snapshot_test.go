package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"
)

// sampleLog has several segments, a retention cut, nil and empty keys and
// values, extreme timestamps and epochs, and idempotent producers.
func sampleLog(t testing.TB) *Log {
	t.Helper()
	l := newLog(t, Config{SegmentRecords: 5, SegmentBytes: 400, RetentionAge: time.Hour, RetentionBytes: 1500, IndexIntervalBytes: 40})
	for i := range 20 {
		mustAppend(t, l, Batch{ProducerID: 11, BaseSeq: int32(i * 3), Records: recs("a", 3, 30, int64(i)*1e9)}, uint64(1+i/7))
	}
	mustAppend(t, l, Batch{ProducerID: -5, Records: recs("b", 2, 0, 0)}, 4)
	mustAppend(t, l, Batch{Records: []Record{
		{Timestamp: -1 << 63, Key: nil, Value: nil},
		{Timestamp: 1<<63 - 1, Key: []byte{}, Value: []byte{}, MsgID: "ünïcode"},
		{Timestamp: 0, Key: []byte{0}, Value: []byte("v")},
	}}, 1<<64-1)
	l.EnforceRetention(0)
	if l.StartOffset() == 0 {
		t.Fatal("sample log should have had retention cut its head")
	}
	return l
}

func snapshotBytes(t testing.TB, l *Log) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := l.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: n=%d len=%d err=%v", n, buf.Len(), err)
	}
	return buf.Bytes()
}

// assertSameLog compares everything observable, and the encodings (which
// cover the producers' cached batches too).
func assertSameLog(t testing.TB, got, want *Log) {
	t.Helper()
	if !reflect.DeepEqual(got.Config(), want.Config()) {
		t.Fatalf("config %+v, want %+v", got.Config(), want.Config())
	}
	if !reflect.DeepEqual(got.Segments(), want.Segments()) {
		t.Fatalf("segments differ:\n got %+v\nwant %+v", got.Segments(), want.Segments())
	}
	if !reflect.DeepEqual(got.Producers(), want.Producers()) {
		t.Fatalf("producers %+v, want %+v", got.Producers(), want.Producers())
	}
	if got.StartOffset() != want.StartOffset() || got.EndOffset() != want.EndOffset() || got.Size() != want.Size() {
		t.Fatal("start/end/size differ")
	}
	if !reflect.DeepEqual(readAll(t, got), readAll(t, want)) {
		t.Fatal("records differ")
	}
	if !bytes.Equal(snapshotBytes(t, got), snapshotBytes(t, want)) {
		t.Fatal("encodings differ")
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	l := sampleLog(t)
	got, err := ReadLog(bytes.NewReader(snapshotBytes(t, l)))
	if err != nil {
		t.Fatal(err)
	}
	assertSameLog(t, got, l)

	// The restored log carries on exactly like the original, including
	// duplicate detection and the next sequence.
	retry := Batch{ProducerID: 11, BaseSeq: 57, Records: recs("a", 3, 30, 19e9)}
	r1, err1 := l.Append(retry, 9)
	r2, err2 := got.Append(retry, 9)
	if err1 != nil || err2 != nil || r1 != r2 || !r1.Duplicate {
		t.Fatalf("retry after restore: %+v %v vs %+v %v", r2, err2, r1, err1)
	}
	next := Batch{ProducerID: 11, BaseSeq: 60, Records: recs("c", 7, 20, 50e9)}
	mustAppend(t, l, next, 9)
	mustAppend(t, got, next, 9)
	assertSameLog(t, got, l)

	// Empty and zero logs round-trip too.
	for _, l := range []*Log{newLog(t, Config{SegmentBytes: 10}), new(Log)} {
		got, err := ReadLog(bytes.NewReader(snapshotBytes(t, l)))
		if err != nil {
			t.Fatal(err)
		}
		if got.EndOffset() != 0 || len(got.Segments()) != 1 || got.Config() != l.Config() {
			t.Fatalf("empty log restored as %+v %+v", got.Segments(), got.Config())
		}
	}
}

func TestReadLogReadsExactlyItsBytes(t *testing.T) {
	l := sampleLog(t)
	stream := append(snapshotBytes(t, l), "TRAILER"...)
	r := bytes.NewReader(stream)
	if _, err := ReadLog(r); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != "TRAILER" {
		t.Fatalf("ReadLog consumed bytes past the snapshot; left %q", rest)
	}
}

func TestReadLogRejectsDamage(t *testing.T) {
	good := snapshotBytes(t, sampleLog(t))
	// Every truncation.
	for n := range len(good) {
		if _, err := ReadLog(bytes.NewReader(good[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: got %v, want ErrCorrupt", n, len(good), err)
		}
	}
	// Every single-bit flip in a sample of positions is caught (by the
	// checksum if nothing earlier).
	for i := 0; i < len(good); i += 7 {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		if _, err := ReadLog(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipped byte %d: got %v, want ErrCorrupt", i, err)
		}
	}
	// A frame claiming a terabyte fails on the missing bytes, not on memory.
	huge := bytes.Clone(good[:frameHeaderLen])
	huge[5] = 0xff
	if _, err := ReadLog(bytes.NewReader(huge)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge frame: %v", err)
	}
}

func TestReadLogChecksConsistency(t *testing.T) {
	// Well-formed frames carrying inconsistent content must be refused.
	seg := func(base int64, closed byte, n int) []byte {
		l := newLog(t, Config{SegmentRecords: 1000})
		appendEach(t, l, recs("x", max(n, 1), 3, 0), 1)
		var s Snapshot = *l.Snapshot()
		// Offsets are implicit in the encoding, so only base and length matter.
		s.segs[0].base, s.segs[0].closed, s.segs[0].batches = base, closed == 1, s.segs[0].batches[:n]
		var buf bytes.Buffer
		if _, err := s.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	// Splice: header from a 2-segment snapshot, then chosen segment frames.
	two := newLog(t, Config{SegmentRecords: 1000})
	var s2 Snapshot = *two.Snapshot()
	s2.segs = append(s2.segs, frozenSegment{})
	var hdr bytes.Buffer
	s2.WriteTo(&hdr)
	header := frameAt(t, hdr.Bytes(), 0)
	segFrame := func(b []byte) []byte { return frameAt(t, b, 1) }
	prodFrame := frameAt(t, seg(0, 0, 0), 2)

	for name, frames := range map[string][][]byte{
		"gap between segments":   {header, segFrame(seg(0, 1, 3)), segFrame(seg(4, 0, 1)), prodFrame},
		"active segment first":   {header, segFrame(seg(0, 0, 3)), segFrame(seg(3, 0, 1)), prodFrame},
		"last segment closed":    {header, segFrame(seg(0, 1, 3)), segFrame(seg(3, 1, 1)), prodFrame},
		"empty closed segment":   {header, segFrame(seg(0, 1, 0)), segFrame(seg(0, 0, 1)), prodFrame},
		"negative base offset":   {header, segFrame(seg(-3, 1, 3)), segFrame(seg(0, 0, 1)), prodFrame},
		"missing producer frame": {header, segFrame(seg(0, 1, 3)), segFrame(seg(3, 0, 1))},
	} {
		_, err := ReadLog(bytes.NewReader(bytes.Join(frames, nil)))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
	ok := [][]byte{header, segFrame(seg(0, 1, 3)), segFrame(seg(3, 0, 1)), prodFrame}
	if _, err := ReadLog(bytes.NewReader(bytes.Join(ok, nil))); err != nil {
		t.Fatalf("control splice should decode: %v", err)
	}
}

// frameAt returns the i-th frame (header included) of a snapshot.
func frameAt(t testing.TB, b []byte, i int) []byte {
	t.Helper()
	for {
		if len(b) < frameHeaderLen {
			t.Fatalf("no frame %d", i)
		}
		n := frameHeaderLen + int(binary.LittleEndian.Uint64(b))
		if i == 0 {
			return b[:n]
		}
		b, i = b[n:], i-1
	}
}

func TestSnapshotIsPointInTime(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 50, RetentionBytes: 5000})
	mustAppend(t, l, Batch{ProducerID: 1, Records: recs("p", 30, 20, 0)}, 1)
	snap := l.Snapshot()
	want := snapshotBytes(t, l)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // keep changing the log while the snapshot is written
		defer wg.Done()
		for i := 1; i < 200; i++ {
			mustAppend(t, l, Batch{ProducerID: 1, BaseSeq: int32(i * 30), Records: recs("p", 30, 20, 0)}, 2)
			l.EnforceRetention(0)
		}
	}()
	var got bytes.Buffer
	if _, err := snap.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("snapshot changed after it was taken")
	}
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	t.Run("memory", func(t *testing.T) { concurrentReadersAndWriter(t, false) })
	// With a folder, closed segments are read from their files, and
	// snapshots read them while retention deletes them.
	t.Run("files", func(t *testing.T) { concurrentReadersAndWriter(t, true) })
}

func concurrentReadersAndWriter(t *testing.T, files bool) {
	l := newLog(t, Config{SegmentRecords: 8, RetentionBytes: 2000})
	if files {
		if err := l.AttachDir(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := l.StartOffset()
				if recs, err := l.Read(start, 10); err != nil && !errors.Is(err, ErrOffsetOutOfRange) {
					t.Error(err)
					return
				} else if len(recs) > 0 && recs[0].Offset < start {
					t.Errorf("read offset %d below start %d", recs[0].Offset, start)
				}
				l.Window(0, 5)
				l.Segments()
				l.Producers()
				l.OffsetForTime(5e6)
				snap := l.Snapshot()
				if _, err := snap.WriteTo(io.Discard); err != nil {
					t.Errorf("a snapshot taken while retention deletes segments: %v", err)
					return
				}
			}
		}()
	}
	for i := range 300 {
		mustAppend(t, l, Batch{ProducerID: 3, BaseSeq: int32(i * 2), Records: recs("c", 2, 30, int64(i)*1e6)}, 1)
		if i%10 == 0 {
			l.EnforceRetention(0)
		}
	}
	close(stop)
	wg.Wait()
}
