package queue

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// Commands travel in raft entries in a compact binary form: a version
// byte, the op, the time, then the op's fields as varints and
// length-prefixed strings.

const codecVersion = 1

// Encode returns the command's wire form.
func (c Command) Encode() []byte {
	w := writer{b: make([]byte, 0, 64)}
	w.b = append(w.b, codecVersion, byte(c.Op))
	w.varint(c.Now)
	w.uvarint(c.ReqID)
	switch c.Op {
	case OpSend:
		w.uvarint(uint64(len(c.Messages)))
		for _, m := range c.Messages {
			w.str(m.MsgID)
			w.bytes(m.Body)
			w.attrs(m.Attributes)
			w.varint(int64(m.Delay))
		}
	case OpReceive:
		w.str(c.Consumer)
		w.varint(int64(c.Max))
		w.varint(int64(c.Visibility))
		w.varint(int64(c.Limit))
	case OpAck, OpNack, OpChangeVisibility, OpDeadLetter:
		w.uvarint(uint64(len(c.Receipts)))
		for _, r := range c.Receipts {
			w.str(r)
		}
		w.varint(int64(c.Delay))
		w.varint(int64(c.Visibility))
		w.str(c.Reason)
	case OpTransferIn:
		t := c.Transfer
		w.str(c.TransferID)
		w.b = append(w.b, byte(c.Kind))
		w.str(t.MsgID)
		w.bytes(t.Body)
		w.attrs(t.Attributes)
		w.varint(t.SentAt)
		w.varint(int64(t.ReceiveCount))
		w.str(t.LastError)
		w.str(t.Source)
		w.varint(int64(t.Redrives))
	case OpMoved:
		w.uvarint(c.Seq)
		w.str(c.TransferID)
	case OpRedrive:
		w.str(c.To)
		w.varint(int64(c.Max))
	case OpPurge:
		w.str(c.Consumer)
	}
	return w.b
}

// DecodeCommand reads a command written by Encode. It never panics on bad
// input.
func DecodeCommand(p []byte) (Command, error) {
	var c Command
	if len(p) < 2 || p[0] != codecVersion {
		return c, fmt.Errorf("%w: bad header", ErrBadCommand)
	}
	c.Op = Op(p[1])
	r := reader{p: p[2:]}
	c.Now = r.varint()
	c.ReqID = r.uvarint()
	switch c.Op {
	case OpSend:
		n := r.count()
		for i := 0; i < n && r.err == nil; i++ {
			c.Messages = append(c.Messages, NewMessage{MsgID: r.str(), Body: r.bytes(), Attributes: r.attrs(), Delay: time.Duration(r.varint())})
		}
	case OpReceive:
		c.Consumer = r.str()
		c.Max = int(r.varint())
		c.Visibility = time.Duration(r.varint())
		c.Limit = int(r.varint())
	case OpAck, OpNack, OpChangeVisibility, OpDeadLetter:
		n := r.count()
		for i := 0; i < n && r.err == nil; i++ {
			c.Receipts = append(c.Receipts, r.str())
		}
		c.Delay = time.Duration(r.varint())
		c.Visibility = time.Duration(r.varint())
		c.Reason = r.str()
	case OpTick:
	case OpTransferIn:
		c.TransferID = r.str()
		c.Kind = MoveKind(r.byte())
		c.Transfer = Transfer{MsgID: r.str(), Body: r.bytes(), Attributes: r.attrs(), SentAt: r.varint(),
			ReceiveCount: int(r.varint()), LastError: r.str(), Source: r.str(), Redrives: int(r.varint())}
	case OpMoved:
		c.Seq = r.uvarint()
		c.TransferID = r.str()
	case OpRedrive:
		c.To = r.str()
		c.Max = int(r.varint())
	case OpPurge:
		c.Consumer = r.str()
	default:
		return c, fmt.Errorf("%w: unknown op %d", ErrBadCommand, c.Op)
	}
	if r.err == nil && len(r.p) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrBadCommand, len(r.p))
	}
	return c, r.err
}

type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *writer) bytes(p []byte)   { w.uvarint(uint64(len(p))); w.b = append(w.b, p...) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }

// attrs writes a map in key order, so equal maps encode alike.
func (w *writer) attrs(m map[string]string) {
	w.uvarint(uint64(len(m)))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		w.str(m[k])
	}
}

// reader decodes, remembering the first error; after one, every read
// returns zero.
type reader struct {
	p   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated or bad %s", ErrBadCommand, what)
	}
	r.p = nil
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.p) == 0 {
		r.fail("byte")
		return 0
	}
	b := r.p[0]
	r.p = r.p[1:]
	return b
}

// count reads a length that must fit in what is left (each item takes at
// least one byte), so a corrupt length cannot make a huge allocation.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.p)) {
		r.fail("count")
		return 0
	}
	return int(n)
}

func (r *reader) bytes() []byte {
	n := r.count()
	if r.err != nil || n == 0 {
		return nil
	}
	b := append([]byte(nil), r.p[:n]...)
	r.p = r.p[n:]
	return b
}

func (r *reader) str() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := string(r.p[:n])
	r.p = r.p[n:]
	return s
}

func (r *reader) attrs() map[string]string {
	n := r.count()
	if r.err != nil || n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && r.err == nil; i++ {
		k := r.str()
		m[k] = r.str()
	}
	return m
}
