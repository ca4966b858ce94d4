package partlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// A snapshot is a sequence of frames:
//
//	8 bytes  payload length, little endian
//	4 bytes  CRC-32C of the payload, little endian
//	payload
//
// Framing lets ReadLog read exactly the bytes WriteTo wrote and no more (a
// caller may put other state after it in the same stream), lets it size
// each buffer from the length instead of guessing, and gives every part of
// the snapshot its own checksum so damage is reported where it is.
const frameHeaderLen = 12

// maxFrameLen rejects absurd lengths before reading; lengths below it are
// still only trusted as far as the stream actually delivers bytes.
const maxFrameLen = min(1<<40, math.MaxInt)

// readStep is how much of a frame is allocated before its bytes arrive.
const readStep = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SharingWriter is a writer that can keep bytes by reference instead of
// copying them, such as a snapshot store that holds snapshots in memory.
// Snapshot.WriteTo hands it the stored batches with WriteShared: they are
// never modified (see the package comment), so a snapshot kept in memory
// shares the log's bytes rather than holding a second copy of them, and
// writing it copies only the framing.
type SharingWriter interface {
	io.Writer
	// WriteShared appends p to the stream as Write does, but may keep p
	// itself; nobody modifies p afterwards.
	WriteShared(p []byte) (int, error)
	// WriteLater appends n bytes that fill writes into the slice it is
	// given, at any time before they are first read. WriteTo hands over
	// the checksums of the segment frames this way: a snapshot kept in
	// memory that is never read (never restored, never sent to a follower)
	// then costs no pass over the log's bytes at all.
	WriteLater(n int, fill func(p []byte)) (int, error)
	// WriteSource appends n bytes that src writes each time the stream
	// is read, keeping none of them: a closed segment whose bytes are in
	// its file goes into a snapshot this way (see evict.go). An error
	// from src, or a length other than n, fails the read.
	WriteSource(n int, src func(w io.Writer) error) (int, error)
}

// frameWriter writes frames, remembering the first error and counting the
// bytes handed to the underlying writer. It buffers its writes, except to
// a SharingWriter, which keeps what it is given and needs no buffer.
type frameWriter struct {
	cw    countingWriter
	bw    *bufio.Writer // nil when writing to a SharingWriter
	share SharingWriter
	err   error
	hdr   [frameHeaderLen]byte // here rather than on the stack, where it would escape once per frame
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newFrameWriter(w io.Writer) *frameWriter {
	fw := &frameWriter{cw: countingWriter{w: w}}
	if sw, ok := w.(SharingWriter); ok {
		fw.share = sw
	} else {
		fw.bw = bufio.NewWriterSize(&fw.cw, 256<<10)
	}
	return fw
}

func (fw *frameWriter) frame(payload []byte) {
	fw.begin(len(payload), crc32.Checksum(payload, castagnoli))
	fw.write(payload)
}

// begin writes the header of a frame whose payload of n bytes, with CRC
// crc, the caller then writes in pieces with write and writeStored. This
// is how stored batches go out: checksummed and copied (or shared) straight
// from where they are, never gathered into one buffer first.
func (fw *frameWriter) begin(n int, crc uint32) {
	binary.LittleEndian.PutUint64(fw.hdr[:8], uint64(n))
	binary.LittleEndian.PutUint32(fw.hdr[8:], crc)
	fw.write(fw.hdr[:])
}

// beginLater is begin for a SharingWriter, with the CRC computed by crc
// only when the writer needs the bytes.
func (fw *frameWriter) beginLater(n int, crc func() uint32) {
	binary.LittleEndian.PutUint64(fw.hdr[:8], uint64(n))
	fw.write(fw.hdr[:8])
	if fw.err != nil {
		return
	}
	k, err := fw.share.WriteLater(4, func(p []byte) { binary.LittleEndian.PutUint32(p, crc()) })
	fw.cw.n += int64(k)
	fw.err = err
}

func (fw *frameWriter) write(p []byte) {
	switch {
	case fw.err != nil:
	case fw.bw != nil:
		_, fw.err = fw.bw.Write(p)
	default:
		_, fw.err = fw.cw.Write(p)
	}
}

// writeStored writes bytes of a stored batch, which a SharingWriter may
// keep rather than copy.
func (fw *frameWriter) writeStored(p []byte) {
	if fw.share == nil || fw.err != nil {
		fw.write(p)
		return
	}
	n, err := fw.share.WriteShared(p)
	fw.cw.n += int64(n)
	fw.err = err
}

func (fw *frameWriter) finish() (int64, error) {
	if fw.err == nil && fw.bw != nil {
		fw.err = fw.bw.Flush()
	}
	return fw.cw.n, fw.err
}

// frameReader reads frames one at a time straight from the caller's reader.
// It does no read-ahead, so nothing after the snapshot is consumed.
type frameReader struct {
	r      io.Reader
	verify bool // check CRCs; off only in fuzzing, to reach the parsers
}

// next reads one frame. what names it in errors ("header", "segment 3 of 9").
func (fr *frameReader) next(what func() string) ([]byte, error) {
	var hdr [frameHeaderLen]byte
	if _, err := io.ReadFull(fr.r, hdr[:]); err != nil {
		return nil, frameErr(what(), "frame header", err)
	}
	n := binary.LittleEndian.Uint64(hdr[:8])
	if n > maxFrameLen {
		return nil, fmt.Errorf("%w: snapshot %s: frame length %d is beyond the %d-byte limit", ErrCorrupt, what(), n, uint64(maxFrameLen))
	}
	p, err := readExactly(fr.r, int(n))
	if err != nil {
		return nil, frameErr(what(), fmt.Sprintf("%d-byte frame", n), err)
	}
	if want, got := binary.LittleEndian.Uint32(hdr[8:]), crc32.Checksum(p, castagnoli); fr.verify && want != got {
		return nil, fmt.Errorf("%w: snapshot %s: checksum is %#08x, the frame says %#08x; the bytes were damaged", ErrCorrupt, what(), got, want)
	}
	return p, nil
}

func frameErr(what, part string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: snapshot %s: stream ends inside the %s (truncated snapshot)", ErrCorrupt, what, part)
	}
	return fmt.Errorf("partlog: reading snapshot %s: %w", what, err)
}

// readExactly reads n bytes. Up to readStep it allocates n at once; beyond
// that it doubles the buffer only as bytes actually arrive, so a damaged
// length can make it allocate at most about twice what the stream really
// holds. The result has no spare capacity, since records will keep it alive.
func readExactly(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, min(n, readStep))
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	for len(buf) < n {
		bigger := make([]byte, min(n, 2*len(buf)))
		copy(bigger, buf)
		if _, err := io.ReadFull(r, bigger[len(buf):]); err != nil {
			return nil, err
		}
		buf = bigger
	}
	return buf, nil
}
