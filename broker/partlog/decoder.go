package partlog

import (
	"encoding/binary"
	"fmt"
)

// decoder reads the varint encodings of this package from a byte slice. It
// never panics: every read is bounds checked, and after the first failure
// every read returns zero values and err keeps the first failure, so parsing
// code can read a whole structure and check err once.
type decoder struct {
	p     []byte
	total int    // len of the original input, to report positions
	what  string // what is being decoded, for error messages
	// whatFn, when set, replaces what; it saves formatting a name for every
	// one of thousands of segments when only a failure needs it.
	whatFn func() string
	err    error
}

func newDecoder(p []byte, what string) *decoder {
	return &decoder{p: p, total: len(p), what: what}
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		what := d.what
		if d.whatFn != nil {
			what = d.whatFn()
		}
		d.err = fmt.Errorf("%w: %s at byte %d: %s", ErrCorrupt, what, d.total-len(d.p), fmt.Sprintf(format, args...))
	}
}

func (d *decoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.p) == 0 {
		d.failf("%s: input ends early", field)
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.failf("%s: truncated or overlong varint", field)
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint(field string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.failf("%s: truncated or overlong varint", field)
		return 0
	}
	d.p = d.p[n:]
	return v
}

// int32 reads a varint that must fit in an int32.
func (d *decoder) int32(field string) int32 {
	v := d.varint(field)
	if v != int64(int32(v)) {
		d.failf("%s is %d; want a 32-bit value", field, v)
		return 0
	}
	return int32(v)
}

// count reads a length or count and checks that, at minBytes bytes per
// element, that many elements fit in what is left of the input. This is
// what stops a damaged count from allocating gigabytes.
func (d *decoder) count(field string, minBytes int) int {
	v := d.uvarint(field)
	if d.err != nil {
		return 0
	}
	if left := uint64(len(d.p)); v > left/uint64(minBytes) {
		d.failf("%s is %d, but only %d bytes are left (each takes at least %d)", field, v, left, minBytes)
		return 0
	}
	return int(v)
}

// raw returns the next n bytes, sharing them with the input.
func (d *decoder) raw(n int, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.p) {
		d.failf("%s: %d bytes needed, %d left", field, n, len(d.p))
		return nil
	}
	// Cap the slice so that appending to it can never overwrite what
	// follows it in the shared input.
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

// done fails if input is left over: it would mean the encoder and decoder
// disagree about the format.
func (d *decoder) done() {
	if d.err == nil && len(d.p) > 0 {
		d.failf("%d unexpected bytes after the end", len(d.p))
	}
}

// appendOptBytes writes a byte string as uvarint(len+1) then the bytes,
// where 0 stands for nil: a nil key (unkeyed) must survive a round trip as
// nil, distinct from an empty key.
func appendOptBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(b))+1)
	return append(dst, b...)
}
