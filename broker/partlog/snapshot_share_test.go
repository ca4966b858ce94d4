package partlog

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// sharingBuffer records what it is given by reference.
type sharingBuffer struct {
	bytes.Buffer
	shared [][]byte
	later  []func()
	// sources counts the pieces handed over to be read from files.
	sources int
}

func (b *sharingBuffer) WriteShared(p []byte) (int, error) {
	b.shared = append(b.shared, p)
	return b.Write(p)
}

// WriteLater fills a placeholder once the stream is complete, as a store
// that computes them when first read would.
func (b *sharingBuffer) WriteLater(n int, fill func(p []byte)) (int, error) {
	at := b.Len()
	b.later = append(b.later, func() { fill(b.Bytes()[at : at+n]) })
	return b.Write(make([]byte, n))
}

// WriteSource writes the source's bytes at once, as a store reading
// the stream would.
func (b *sharingBuffer) WriteSource(n int, src func(w io.Writer) error) (int, error) {
	b.sources++
	at := b.Len()
	if err := src(b); err != nil {
		return 0, err
	}
	if b.Len()-at != n {
		return b.Len() - at, fmt.Errorf("a source wrote %d bytes, announced %d", b.Len()-at, n)
	}
	return n, nil
}

func (b *sharingBuffer) fill() {
	for _, f := range b.later {
		f()
	}
}

// A SharingWriter gets the same stream as any writer, with every stored
// batch handed over by reference rather than copied.
func TestSnapshotSharesStoredBatches(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 8})
	for i := range 5 {
		mustAppend(t, l, Batch{Records: recs("s", 3+i, 40, int64(i)*1e9)}, uint64(1+i/2))
	}
	var plain bytes.Buffer
	n, err := l.WriteTo(&plain)
	if err != nil || n != int64(plain.Len()) {
		t.Fatalf("WriteTo a buffer: %d bytes, %v; the buffer holds %d", n, err, plain.Len())
	}
	var sw sharingBuffer
	snap := l.Snapshot()
	n, err = snap.WriteTo(&sw)
	if err != nil || n != int64(sw.Len()) {
		t.Fatalf("WriteTo a sharing writer: %d bytes, %v; it holds %d", n, err, sw.Len())
	}
	if len(sw.later) != len(l.segs) {
		t.Fatalf("%d checksums left to compute later, want one per segment (%d)", len(sw.later), len(l.segs))
	}
	var stored [][]byte
	for _, s := range l.segs {
		for _, b := range s.batches {
			stored = append(stored, b.data)
		}
	}
	want := readAll(t, l)
	// The log goes on meanwhile; the checksums are of the snapshot's state.
	mustAppend(t, l, Batch{Records: recs("after", 4, 40, 9e9)}, 3)
	sw.fill()
	if !bytes.Equal(sw.Bytes(), plain.Bytes()) {
		t.Fatalf("a sharing writer got %d bytes that differ from the %d a plain writer got", sw.Len(), plain.Len())
	}
	if len(sw.shared) != len(stored) {
		t.Fatalf("%d pieces shared, want the %d stored batches", len(sw.shared), len(stored))
	}
	for i, p := range sw.shared {
		if len(p) != len(stored[i]) || &p[0] != &stored[i][0] {
			t.Errorf("shared piece %d is not stored batch %d itself", i, i)
		}
	}
	back, err := ReadLog(bytes.NewReader(sw.Bytes()))
	if err != nil {
		t.Fatalf("ReadLog: %v", err)
	}
	if got := readAll(t, back); len(got) != len(want) {
		t.Fatalf("read back %d records, want %d", len(got), len(want))
	}
}
