package disk

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestChunksKeepBytesInOrder(t *testing.T) {
	var c chunks
	var want []byte
	for i := 0; i < 3000; i++ {
		p := make([]byte, 700+i%13)
		for k := range p {
			p[k] = byte(i + k)
		}
		c.Write(p)
		want = append(want, p...)
	}
	got, _ := io.ReadAll(c.reader())
	if c.size() != int64(len(want)) || !bytes.Equal(got, want) {
		t.Fatalf("chunks hold %d bytes (read back %d), want %d, equal=%v", c.size(), len(got), len(want), bytes.Equal(got, want))
	}
	if len(c.pieces) < 2 {
		t.Fatalf("%d bytes fit in %d chunk(s); the test should span several", len(want), len(c.pieces))
	}
}

// Shared pieces are kept by reference, small ones copied, and written bytes
// around them still land in order.
func TestChunksShareLargePieces(t *testing.T) {
	var c chunks
	var want []byte
	var shared [][]byte
	for i := 0; i < 500; i++ {
		small := []byte{byte(i), byte(i >> 8), 7}
		c.Write(small)
		want = append(want, small...)
		p := make([]byte, []int{minShared - 1, minShared, 3000}[i%3])
		for k := range p {
			p[k] = byte(i * k)
		}
		c.WriteShared(p)
		want = append(want, p...)
		if len(p) >= minShared {
			shared = append(shared, p)
		}
	}
	got, _ := io.ReadAll(c.reader())
	if c.size() != int64(len(want)) || !bytes.Equal(got, want) {
		t.Fatalf("chunks hold %d bytes (read back %d), want %d, equal=%v", c.size(), len(got), len(want), bytes.Equal(got, want))
	}
	kept := 0
	for _, piece := range c.pieces {
		for _, p := range shared {
			if len(piece) == len(p) && &piece[0] == &p[0] {
				kept++
			}
		}
	}
	if kept != len(shared) {
		t.Errorf("%d of %d large shared pieces kept by reference", kept, len(shared))
	}
	if len(c.pieces) > 2*len(shared)+2 {
		t.Errorf("%d pieces for %d shared ones: the written bytes between them should extend one buffer's pieces, not add small copies", len(c.pieces), len(shared))
	}
}

// Bytes written for later are computed once, when the stream is first
// read, and land where they were written.
func TestChunksFillLaterOnFirstRead(t *testing.T) {
	var c chunks
	c.Write([]byte("ab"))
	calls := 0
	c.WriteLater(3, func(p []byte) { calls++; copy(p, "xyz") })
	c.WriteShared(bytes.Repeat([]byte{'s'}, minShared))
	c.Write([]byte("cd"))
	if calls != 0 {
		t.Fatalf("filled %d times before any read", calls)
	}
	want := "abxyz" + strings.Repeat("s", minShared) + "cd"
	stored := c // the store keeps a copy of the sink's chunks
	for range 2 {
		got, _ := io.ReadAll(stored.reader())
		if string(got) != want || stored.size() != int64(len(want)) {
			t.Fatalf("read %q (size %d), want %q", got, stored.size(), want)
		}
	}
	if got, _ := io.ReadAll(c.reader()); string(got) != want || calls != 1 {
		t.Fatalf("the sink's own view read %q after %d fills, want %q after 1", got, calls, want)
	}
}

// A small stream takes a small buffer, and a large one grows into
// buffers of up to chunkSize, not one per write.
func TestChunksGrowWithTheStream(t *testing.T) {
	var small chunks
	small.Write(bytes.Repeat([]byte{'h'}, 300))
	if got := cap(small.pieces[0]); got > firstChunkSize {
		t.Errorf("300 bytes took a buffer of %d; want at most %d", got, firstChunkSize)
	}
	var big chunks
	want := bytes.Repeat([]byte("0123456789"), 1<<20/10*5)
	for p := want; len(p) > 0; p = p[min(len(p), 1000):] {
		big.Write(p[:min(len(p), 1000)])
	}
	got, _ := io.ReadAll(big.reader())
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, wrote %d", len(got), len(want))
	}
	if n := len(big.pieces); n > 12 {
		t.Errorf("%d buffers for %d bytes written a kilobyte at a time; want them to grow to %d", n, len(want), chunkSize)
	}
}

// A source piece is written each time the stream is read, in its place.
func TestChunksReadSourcesEachTime(t *testing.T) {
	var c chunks
	c.Write([]byte("ab"))
	calls := 0
	c.WriteSource(3, func(w io.Writer) error { calls++; _, err := w.Write([]byte("xyz")); return err })
	c.Write([]byte("cd"))
	for i := range 2 {
		got, err := io.ReadAll(c.reader())
		if err != nil || string(got) != "abxyzcd" || c.size() != 7 || calls != i+1 {
			t.Fatalf("read %d: %q, %v (size %d, %d calls); want \"abxyzcd\"", i, got, err, c.size(), calls)
		}
	}
	var bad chunks
	bad.WriteSource(4, func(w io.Writer) error { _, err := w.Write([]byte("xyz")); return err })
	if _, err := io.ReadAll(bad.reader()); err == nil {
		t.Fatal("a source that wrote 3 of its 4 bytes read without an error")
	}
}

// A snapshot that arrives whole, plain writes only, keeps spillAt bytes in
// memory and the rest in a file, and reads back the same; one with
// shared pieces (a replica's own) stays in memory, however large.
func TestChunksSpillAPlainStream(t *testing.T) {
	want := bytes.Repeat([]byte("abcdefghijklmnopq"), (spillAt+spillAt/2)/17)
	var c chunks
	for p := want; len(p) > 0; p = p[min(len(p), 64<<10):] {
		c.Write(p[:min(len(p), 64<<10)])
	}
	if c.spill == nil {
		t.Fatalf("%d bytes written plainly stayed in memory", len(want))
	}
	var inMemory int
	for _, p := range c.pieces {
		inMemory += len(p)
	}
	if inMemory > spillAt {
		t.Errorf("%d bytes in memory, want at most %d", inMemory, spillAt)
	}
	for range 2 {
		got, err := io.ReadAll(c.reader())
		if err != nil || !bytes.Equal(got, want) || c.size() != int64(len(want)) {
			t.Fatalf("read back %d bytes (%v), size %d; wrote %d", len(got), err, c.size(), len(want))
		}
	}

	var own chunks
	own.Write([]byte("header"))
	own.WriteShared(bytes.Repeat([]byte{'s'}, minShared))
	for p := want; len(p) > 0; p = p[min(len(p), 64<<10):] {
		own.Write(p[:min(len(p), 64<<10)])
	}
	if own.spill != nil {
		t.Error("a stream with shared pieces went to a file")
	}
}
