package kafkawire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"

	"github.com/mqlab/mqlab/broker"
)

// An answer is a framed response on its way to the client: its bytes,
// with the segment file ranges a fetch serves between them, so those
// batches go from the file to the socket as they are (on a plain TCP
// connection, in one sendfile each) instead of through a buffer.
type answer struct {
	parts [][]byte            // the bytes; parts[i] is followed by files[i], if any
	files []*broker.FileRange // each opened for this answer alone
}

// close closes the answer's files.
func (a *answer) close() {
	for _, f := range a.files {
		f.File.Close()
	}
	a.files = nil
}

// writeTo sends the answer and closes its files.
func (a *answer) writeTo(nc net.Conn) error {
	defer a.close()
	for i, p := range a.parts {
		if _, err := nc.Write(p); err != nil {
			return err
		}
		if i >= len(a.files) {
			continue
		}
		f := a.files[i]
		if _, err := f.File.Seek(f.Pos, io.SeekStart); err != nil {
			return err
		}
		// TCPConn.ReadFrom takes an *io.LimitedReader of an *os.File as
		// one sendfile of that many bytes from the file's offset.
		src := &io.LimitedReader{R: f.File, N: f.Len}
		var n int64
		var err error
		if tc, ok := nc.(*net.TCPConn); ok {
			n, err = tc.ReadFrom(src)
		} else {
			n, err = io.Copy(nc, src)
		}
		if err == nil && n != f.Len {
			// The frame's size said more: the connection cannot go on.
			err = fmt.Errorf("sent %d of a segment file's %d bytes", n, f.Len)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// A splice is a file range a fetch answer serves, and the marker its
// response holds in its place until it is framed.
type splice struct {
	marker []byte
	file   *broker.FileRange
}

const markerLen = 16

// newSplice makes a marker for rng: random bytes that nothing else in
// the response holds.
func newSplice(rng *broker.FileRange) splice {
	m := make([]byte, markerLen)
	binary.LittleEndian.PutUint64(m, rand.Uint64())
	binary.LittleEndian.PutUint64(m[8:], rand.Uint64())
	return splice{marker: m, file: rng}
}

// spliceFrame cuts a framed response at each splice's marker, in order,
// and puts the file range there: the marker's length prefix becomes the
// range's (an int32, or in a flexible version a compact uvarint of length
// + 1) and the frame's size grows to match.
func spliceFrame(out []byte, flexible bool, splices []splice) (answer, error) {
	var a answer
	rest, size := out, int64(len(out)-4)
	for _, s := range splices {
		i := bytes.Index(rest, s.marker)
		plen := 4
		if flexible {
			plen = 1 // uvarint(markerLen+1)
		}
		if i < plen {
			return answer{}, fmt.Errorf("a fetch answer lost its place for a segment file's bytes")
		}
		// The new prefix is written over the old one and the marker,
		// which it never outgrows (5 bytes at most).
		head := rest[:i-plen]
		if flexible {
			head = binary.AppendUvarint(head, uint64(s.file.Len)+1)
		} else {
			head = binary.BigEndian.AppendUint32(head, uint32(s.file.Len))
		}
		size += int64(len(head)-(i-plen)) - int64(plen) - markerLen + s.file.Len
		a.parts = append(a.parts, head)
		a.files = append(a.files, s.file)
		rest = rest[i+markerLen:]
	}
	if size > 1<<31-1 {
		return answer{}, fmt.Errorf("a fetch answer of %d bytes", size)
	}
	a.parts = append(a.parts, rest)
	binary.BigEndian.PutUint32(a.parts[0][0:], uint32(size))
	return a, nil
}
