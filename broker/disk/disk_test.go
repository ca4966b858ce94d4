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
