package partlog

import (
	"encoding/binary"
	"fmt"
)

// Batch encoding, version 2 (all integers are encoding/binary varints;
// "bytes?" is uvarint(len+1) then the bytes, 0 meaning nil):
//
//	header:
//	  byte    version (2)
//	  varint  ProducerID
//	  varint  BaseSeq
//	  uvarint record count
//	  varint  base timestamp: the first record's (0 for an empty batch)
//	  uvarint max timestamp minus base timestamp (unsigned, modulo 2^64)
//	  uvarint total MsgID bytes, then every record's MsgID, concatenated
//	per record:
//	  varint  Timestamp minus the previous record's (the first: minus the
//	          base timestamp, so 0 as written by AppendBatch)
//	  bytes?  Key
//	  bytes?  Value
//	  uvarint len(MsgID)
//
// This is both the produce command raft replicates and the form a Log keeps:
// like Kafka, a partition stores record batches as they arrived and decodes
// records only when they are read. The header says everything Append needs
// (producer, sequence, count, timestamps for the time index) without
// decoding a record. Timestamps are delta encoded because a leader stamps a
// batch's records within microseconds of each other; the MsgIDs are grouped
// so a reader can turn them into one string per batch instead of one
// allocation per record. Offset and Epoch are not encoded: Append assigns
// them.
const batchVersion = 2

// batchVersionHeaders is version 2 with one more blob after the MsgIDs,
// for batches where a record has headers (only Kafka clients send them):
//
//	uvarint total header bytes, then per record:
//	  uvarint header count, then per header:
//	    uvarint len(Key), Key
//	    bytes?  Value
//
// A batch without headers is written in version 2, so the lab's own
// batches pay nothing for them.
const batchVersionHeaders = 3

// Versions 4 and 5 are 2 and 3 rewritten by compaction (compact.go): the
// cleaner keeps a batch's base offset and its offset span and drops some
// of its records, so the survivors carry their offset deltas, as Kafka's
// records do. Before the version-2 header they add
//
//	varint  base offset
//	uvarint span: the last offset delta + 1, as the batch was written
//	uvarint offset delta bytes, then per record: uvarint offset delta
//
// A compacted batch is never a produce command: AppendEncoded refuses one.
const (
	batchVersionCompacted        = 4
	batchVersionCompactedHeaders = 5
)

// Versions 7 and 8 are 4 and 5 for the survivors of a Kafka client's
// batch (version 6): their records carry no message ids, which a log with
// a Name derives on reading, so the segment file holds no id header the
// client did not send.
const (
	batchVersionCompactedKafka        = 7
	batchVersionCompactedKafkaHeaders = 8
)

// kafkaRecords reports whether the batch p holds a Kafka client's records,
// whose message ids a log derives (Log.decode).
func kafkaRecords(p []byte) bool {
	return len(p) > 0 && (p[0] == batchVersionKafka || p[0] == batchVersionCompactedKafka || p[0] == batchVersionCompactedKafkaHeaders)
}

// minRecordBytes is the least a record body can take: one byte each for the
// timestamp delta, key, value and MsgID length.
const minRecordBytes = 4

// minBatchBytes is the least an encoded batch of at least one record takes:
// seven header bytes and one record.
const minBatchBytes = 7 + minRecordBytes

// EncodeBatch returns the command encoding of b, in a buffer of exactly the
// right size: raft keeps the buffer and a Log keeps it as the batch, so
// spare capacity would be held for as long as the records are.
func EncodeBatch(b Batch) []byte {
	return AppendBatch(make([]byte, 0, BatchSize(b)), b)
}

// BatchSize is the exact length of b's encoding, so a caller can size one
// buffer for a command that carries it.
func BatchSize(b Batch) int {
	baseTS, maxTS, ids := scanRecords(b.Records)
	n := 1 + varintLen(b.ProducerID) + varintLen(int64(b.BaseSeq)) + uvarintLen(uint64(len(b.Records))) +
		varintLen(baseTS) + uvarintLen(uint64(maxTS)-uint64(baseTS)) + uvarintLen(uint64(ids)) + ids
	if hdrs := headersSize(b.Records); hdrs > 0 {
		n += uvarintLen(uint64(hdrs)) + hdrs
	}
	prev := baseTS
	for i := range b.Records {
		r := &b.Records[i]
		n += varintLen(r.Timestamp-prev) + optBytesLen(r.Key) + optBytesLen(r.Value) + uvarintLen(uint64(len(r.MsgID)))
		prev = r.Timestamp
	}
	return n
}

// AppendBatch appends the command encoding of b to dst, so a caller can
// build a command (its own header, then the batch) in one buffer.
func AppendBatch(dst []byte, b Batch) []byte {
	baseTS, maxTS, ids := scanRecords(b.Records)
	hdrs := headersSize(b.Records)
	if hdrs > 0 {
		dst = append(dst, batchVersionHeaders)
	} else {
		dst = append(dst, batchVersion)
	}
	dst = binary.AppendVarint(dst, b.ProducerID)
	dst = binary.AppendVarint(dst, int64(b.BaseSeq))
	dst = binary.AppendUvarint(dst, uint64(len(b.Records)))
	dst = binary.AppendVarint(dst, baseTS)
	dst = binary.AppendUvarint(dst, uint64(maxTS)-uint64(baseTS))
	dst = binary.AppendUvarint(dst, uint64(ids))
	if ids > 0 {
		for i := range b.Records {
			dst = append(dst, b.Records[i].MsgID...)
		}
	}
	if hdrs > 0 {
		dst = binary.AppendUvarint(dst, uint64(hdrs))
		for i := range b.Records {
			dst = appendHeaders(dst, b.Records[i].Headers)
		}
	}
	prev := baseTS
	for i := range b.Records {
		r := &b.Records[i]
		// Subtraction wraps for extreme timestamps; decoding adds it back
		// with the same wrap, so every int64 survives.
		dst = binary.AppendVarint(dst, r.Timestamp-prev)
		dst = appendOptBytes(dst, r.Key)
		dst = appendOptBytes(dst, r.Value)
		dst = binary.AppendUvarint(dst, uint64(len(r.MsgID)))
		prev = r.Timestamp
	}
	return dst
}

// scanRecords returns the first record's timestamp, the largest one (both 0
// without records), and the total length of the MsgIDs.
func scanRecords(recs []Record) (baseTS, maxTS int64, ids int) {
	if len(recs) > 0 {
		baseTS, maxTS = recs[0].Timestamp, recs[0].Timestamp
	}
	for i := range recs {
		maxTS = max(maxTS, recs[i].Timestamp)
		ids += len(recs[i].MsgID)
	}
	return baseTS, maxTS, ids
}

// headersSize is the length of a batch's header blob, 0 when no record
// has headers.
func headersSize(recs []Record) int {
	has := false
	n := 0
	for i := range recs {
		hs := recs[i].Headers
		has = has || len(hs) > 0
		n += uvarintLen(uint64(len(hs)))
		for _, h := range hs {
			n += uvarintLen(uint64(len(h.Key))) + len(h.Key) + optBytesLen(h.Value)
		}
	}
	if !has {
		return 0
	}
	return n
}

func appendHeaders(dst []byte, hs []Header) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(hs)))
	for _, h := range hs {
		dst = binary.AppendUvarint(dst, uint64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendOptBytes(dst, h.Value)
	}
	return dst
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// varintLen matches binary.AppendVarint's zigzag encoding.
func varintLen(v int64) int { return uvarintLen(uint64(v<<1) ^ uint64(v>>63)) }

func optBytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return uvarintLen(uint64(len(b))+1) + len(b)
}

// BatchHeader is what an encoded batch says about itself before its
// records.
type BatchHeader struct {
	ProducerID    int64
	BaseSeq       int32
	Count         int   // records in the batch
	BaseTimestamp int64 // the first record's timestamp
	MaxTimestamp  int64 // the largest record timestamp

	headers bool // a header blob follows the MsgIDs (batchVersionHeaders)

	// kafka is the Kafka record batch of a version 6 or 9 batch
	// (wirebatch.go), nil for the others; labIDs: version 9, whose
	// records carry their message ids in a header.
	kafka  []byte
	labIDs bool

	// Compacted batches only (versions 4 and 5): the base offset the batch
	// was written at, its span of offsets, and its records' offset deltas
	// (uvarints, one per record). offsets is nil for a batch as written.
	Base    int64
	Span    int64
	offsets []byte
}

// compacted reports whether the batch lost records to compaction.
func (h *BatchHeader) compacted() bool { return h.offsets != nil }

// ParseBatchHeader reads the header of an encoded batch without looking at
// its records (so it does not check them: Log.AppendEncoded and DecodeBatch
// do). Damaged input is an error wrapping ErrCorrupt.
func ParseBatchHeader(p []byte) (BatchHeader, error) {
	h, _, err := parseHeader(p)
	return h, err
}

// batchInfo is what parseBatch learns from an encoded batch: its header,
// and from walking the records, their key+value bytes and least timestamp.
type batchInfo struct {
	BatchHeader
	minTS int64
	bytes int64 // key+value bytes
	// wireExact: a Kafka client's batch that its file gives back exactly
	// (checkWire), found on the walk that checked it.
	wireExact bool
}

// parseHeader reads the batch header. rest starts at the MsgID blob length.
func parseHeader(p []byte) (h BatchHeader, rest []byte, err error) {
	in := p
	bad := func(format string, args ...any) (BatchHeader, []byte, error) {
		return BatchHeader{}, nil, corruptf("batch", len(in)-len(p), format, args...)
	}
	if len(p) == 0 {
		return bad("version: input ends early")
	}
	version := p[0]
	if version == batchVersionKafka || version == batchVersionLab {
		h, _, _, _, err := parseWire(p)
		return h, nil, err
	}
	if version < batchVersion || version > batchVersionLab {
		return bad("unknown version %d; this build reads versions %d to %d", p[0], batchVersion, batchVersionLab)
	}
	h.headers = version == batchVersionHeaders || version == batchVersionCompactedHeaders || version == batchVersionCompactedKafkaHeaders
	p = p[1:]
	var n int
	if version >= batchVersionCompacted {
		if h.Base, n = binary.Varint(p); n <= 0 || h.Base < 0 {
			return bad("base offset: truncated or overlong varint, or negative")
		}
		p = p[n:]
		span, n := binary.Uvarint(p)
		if n <= 0 || span == 0 || span > maxSegmentRecords {
			return bad("offset span: truncated or overlong varint, or not 1..%d", int64(maxSegmentRecords))
		}
		h.Span = int64(span)
		p = p[n:]
		ol, n := binary.Uvarint(p)
		if n <= 0 || ol > uint64(len(p)-n) {
			return bad("offset delta bytes: truncated varint or a length past the end")
		}
		h.offsets = p[n : n+int(ol) : n+int(ol)]
		p = p[n+int(ol):]
	}
	if h.ProducerID, n = binary.Varint(p); n <= 0 {
		return bad("producer id: truncated or overlong varint")
	}
	p = p[n:]
	seq, n := binary.Varint(p)
	if n <= 0 {
		return bad("base sequence: truncated or overlong varint")
	}
	if seq != int64(int32(seq)) {
		return bad("base sequence is %d; want a 32-bit value", seq)
	}
	h.BaseSeq = int32(seq)
	p = p[n:]
	count, n := binary.Uvarint(p)
	if n <= 0 {
		return bad("record count: truncated or overlong varint")
	}
	p = p[n:]
	// Checked against the bytes present, so a damaged count cannot make a
	// reader allocate for records that are not there.
	if count > uint64(len(p))/minRecordBytes {
		return bad("record count is %d, but only %d bytes are left (each takes at least %d)", count, len(p), minRecordBytes)
	}
	h.Count = int(count)
	if h.BaseTimestamp, n = binary.Varint(p); n <= 0 {
		return bad("base timestamp: truncated or overlong varint")
	}
	p = p[n:]
	d, n := binary.Uvarint(p)
	if n <= 0 {
		return bad("max timestamp: truncated or overlong varint")
	}
	h.MaxTimestamp = int64(uint64(h.BaseTimestamp) + d)
	return h, p[n:], nil
}

// parseBatch parses an encoded batch and walks its records, checking their
// framing without decoding or allocating anything: every length fits, the
// MsgIDs add up, the max timestamp is the records' own, and nothing follows
// the last record. A batch that passes can be decoded later without
// errors. Damaged input is an error wrapping ErrCorrupt.
func parseBatch(p []byte) (batchInfo, error) {
	if len(p) > 0 && (p[0] == batchVersionKafka || p[0] == batchVersionLab) {
		h, _, kv, minTS, err := parseWire(p)
		var exact bool
		if err == nil {
			exact, err = checkWire(&h, kv, minTS)
		}
		if err != nil {
			return batchInfo{}, err
		}
		return batchInfo{BatchHeader: h, minTS: minTS, bytes: kv, wireExact: exact}, nil
	}
	h, q, err := parseHeader(p)
	if err != nil {
		return batchInfo{}, err
	}
	pos := func() int { return len(p) - len(q) }
	ids, n := binary.Uvarint(q)
	if n <= 0 {
		return batchInfo{}, corruptf("batch", pos(), "message id bytes: truncated or overlong varint")
	}
	q = q[n:]
	if ids > uint64(len(q)) {
		return batchInfo{}, corruptf("batch", pos(), "message id bytes: length %d, but only %d bytes are left", ids, len(q))
	}
	q = q[ids:]
	if h.headers {
		hl, n := binary.Uvarint(q)
		if n <= 0 || hl > uint64(len(q)-n) {
			return batchInfo{}, corruptf("batch", pos(), "header bytes: truncated varint or a length past the end")
		}
		if err := checkHeaders(q[n:n+int(hl)], h.Count); err != nil {
			return batchInfo{}, corruptf("batch", pos(), "headers: %v", err)
		}
		q = q[n+int(hl):]
	}
	if h.compacted() {
		if err := checkOffsets(h.offsets, h.Count, h.Span); err != nil {
			return batchInfo{}, corruptf("batch", pos(), "offset deltas: %v", err)
		}
	}
	info := batchInfo{BatchHeader: h}
	ts := h.BaseTimestamp
	maxTS := ts
	if h.Count > 0 {
		info.minTS = int64(1<<63 - 1)
		maxTS = -1 << 63
	}
	left := ids // MsgID bytes not yet claimed by a record
	for i := range h.Count {
		// Nearly every varint here is one byte; those are read inline.
		var u uint64
		if len(q) > 0 && q[0] < 0x80 {
			u, q = uint64(q[0]), q[1:]
		} else if u, n = binary.Uvarint(q); n > 0 {
			q = q[n:]
		} else {
			return batchInfo{}, corruptf("batch", pos(), "record %d timestamp: truncated or overlong varint", i)
		}
		ts += int64(u>>1) ^ -int64(u&1) // zigzag, as binary.Varint
		info.minTS, maxTS = min(info.minTS, ts), max(maxTS, ts)
		for _, field := range [2]string{"key", "value"} {
			if len(q) > 0 && q[0] < 0x80 {
				u, q = uint64(q[0]), q[1:]
			} else if u, n = binary.Uvarint(q); n > 0 {
				q = q[n:]
			} else {
				return batchInfo{}, corruptf("batch", pos(), "record %d %s: truncated or overlong varint", i, field)
			}
			if u == 0 {
				continue // nil
			}
			if u-1 > uint64(len(q)) {
				return batchInfo{}, corruptf("batch", pos(), "record %d %s: length %d, but only %d bytes are left", i, field, u-1, len(q))
			}
			q = q[u-1:]
			info.bytes += int64(u - 1)
		}
		if len(q) > 0 && q[0] < 0x80 {
			u, q = uint64(q[0]), q[1:]
		} else if u, n = binary.Uvarint(q); n > 0 {
			q = q[n:]
		} else {
			return batchInfo{}, corruptf("batch", pos(), "record %d message id length: truncated or overlong varint", i)
		}
		if u > left {
			return batchInfo{}, corruptf("batch", pos(), "record %d message id length %d, but only %d message id bytes are left", i, u, left)
		}
		left -= u
	}
	switch {
	case left != 0:
		return batchInfo{}, corruptf("batch", pos(), "records use %d of the %d message id bytes", ids-left, ids)
	case len(q) > 0:
		return batchInfo{}, corruptf("batch", pos(), "%d unexpected bytes after the end", len(q))
	case maxTS != h.MaxTimestamp:
		return batchInfo{}, corruptf("batch", pos(), "header says the max timestamp is %d, but the records' is %d", h.MaxTimestamp, maxTS)
	}
	return info, nil
}

// uvarint is binary.Uvarint with a fast path for the one-byte case: in a
// batch nearly every length and timestamp delta is one byte.
func uvarint(p []byte) (uint64, int) {
	if len(p) > 0 && p[0] < 0x80 {
		return uint64(p[0]), 1
	}
	return uvarintSlow(p)
}

func uvarintSlow(p []byte) (uint64, int) { return binary.Uvarint(p) }

func corruptf(what string, at int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d: %s", ErrCorrupt, what, at, fmt.Sprintf(format, args...))
}

// DecodeBatch decodes a command written by EncodeBatch. Damaged input is an
// error wrapping ErrCorrupt, never a panic, and counts are checked against
// the bytes actually present before anything is allocated.
//
// The records' Key and Value slices point into p (no copy: the raft entry
// already holds the bytes), so p must not be modified afterwards.
func DecodeBatch(p []byte) (Batch, error) {
	info, err := parseBatch(p)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{ProducerID: info.ProducerID, BaseSeq: info.BaseSeq}
	b.Records = decodeRecords(p, make([]Record, 0, info.Count), 0, 0, info.Count, 0)
	for i := range b.Records {
		b.Records[i].Offset = 0 // not assigned yet: Append does that
	}
	return b, nil
}

// decodeRecords appends to out up to n records of the encoded batch p,
// which parseBatch has accepted, from the first whose offset is at least
// base+skip, numbering them from base and stamping them with epoch. A
// batch as written holds offsets base, base+1, ...; a compacted one says
// each record's offset delta. Key and Value point into p; the MsgIDs of
// the records returned share one string.
func decodeRecords(p []byte, out []Record, base int64, skip, n int, epoch uint64) []Record {
	h, q, err := parseHeader(p)
	if err != nil {
		return out // cannot happen for an accepted batch
	}
	if h.kafka != nil {
		return decodeWire(&h, out, base, skip, n, epoch)
	}
	r := reader{p: q}
	ids := r.raw(int(r.uvarint()))
	var hr reader
	if h.headers {
		hr.p = r.raw(int(r.uvarint()))
	}
	// A compacted batch says each record's offset delta; a batch as
	// written numbers its records 0, 1, 2, ...
	offs := reader{p: h.offsets}
	compacted := h.compacted()
	ts, idPos := h.BaseTimestamp, 0
	i, d := 0, int64(0)
	for ; i < h.Count; i++ {
		if d = int64(i); compacted {
			d = int64(offs.uvarint())
		}
		if d >= int64(skip) {
			break
		}
		ts += r.varint()
		r.optBytes()
		r.optBytes()
		idPos += int(r.uvarint())
		if h.headers {
			hr.headers(false)
		}
	}
	if i >= h.Count || n <= 0 {
		return out
	}
	s := string(ids[min(idPos, len(ids)):])
	idPos = 0
	for ; i < h.Count && n > 0 && !r.bad; i, n = i+1, n-1 {
		ts += r.varint()
		key := r.optBytes()
		value := r.optBytes()
		idLen := int(r.uvarint())
		if r.bad || idLen > len(s)-idPos {
			break
		}
		rec := Record{Offset: base + d, Epoch: epoch, Timestamp: ts, Key: key, Value: value, MsgID: s[idPos : idPos+idLen]}
		if h.headers {
			rec.Headers = hr.headers(true)
		}
		out = append(out, rec)
		idPos += idLen
		if d = int64(i + 1); compacted && i+1 < h.Count {
			d = int64(offs.uvarint())
		}
	}
	return out
}

// findTime returns the offset delta in the encoded batch p (accepted by
// parseBatch) of the first record with Timestamp >= t, or false.
func findTime(p []byte, t int64) (int64, bool) {
	h, q, err := parseHeader(p)
	if err != nil || h.MaxTimestamp < t {
		return 0, false
	}
	if h.kafka != nil {
		return findWireTime(&h, t)
	}
	r := reader{p: q}
	r.raw(int(r.uvarint()))
	if h.headers {
		r.raw(int(r.uvarint()))
	}
	offs := reader{p: h.offsets}
	ts := h.BaseTimestamp
	for i := range h.Count {
		d := int64(i)
		if h.compacted() {
			d = int64(offs.uvarint())
		}
		ts += r.varint()
		if r.bad {
			break
		}
		if ts >= t {
			return d, true
		}
		r.optBytes()
		r.optBytes()
		r.uvarint()
	}
	return 0, false
}

// reader reads a batch that parseBatch has already checked. It stays
// bounds checked (a damaged input sets bad and reads zeros rather than
// panicking), but it carries no error messages: there are none to give for
// bytes that were validated when they were appended.
type reader struct {
	p   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := uvarint(r.p)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) raw(n int) []byte {
	if n < 0 || n > len(r.p) {
		r.bad = true
		return nil
	}
	b := r.p[:n:n] // capped: appending to it can never overwrite what follows
	r.p = r.p[n:]
	return b
}

func (r *reader) optBytes() []byte {
	v := r.uvarint()
	if v == 0 {
		return nil
	}
	if v-1 > uint64(len(r.p)) {
		r.bad = true
		return nil
	}
	return r.raw(int(v - 1))
}

// headers reads one record's headers from a header blob (nil for none);
// with keep false it only skips them.
func (r *reader) headers(keep bool) []Header {
	n := r.uvarint()
	if n == 0 || r.bad {
		return nil
	}
	var out []Header
	if keep {
		out = make([]Header, 0, min(n, uint64(len(r.p))))
	}
	for range n {
		k := r.raw(int(min(r.uvarint(), uint64(len(r.p)+1))))
		v := r.optBytes()
		if r.bad {
			return out
		}
		if keep {
			out = append(out, Header{Key: string(k), Value: v})
		}
	}
	return out
}

// checkHeaders checks that a header blob holds exactly count records'
// headers, every length within it.
func checkHeaders(p []byte, count int) error {
	for i := range count {
		n, k := binary.Uvarint(p)
		if k <= 0 {
			return fmt.Errorf("record %d: header count: truncated or overlong varint", i)
		}
		p = p[k:]
		if n > uint64(len(p))/2 {
			return fmt.Errorf("record %d: %d headers, but only %d bytes are left", i, n, len(p))
		}
		for j := range n {
			kl, k := binary.Uvarint(p)
			if k <= 0 || kl > uint64(len(p)-k) {
				return fmt.Errorf("record %d header %d: key length past the end", i, j)
			}
			p = p[k+int(kl):]
			vl, k := binary.Uvarint(p)
			if k <= 0 || (vl > 0 && vl-1 > uint64(len(p)-k)) {
				return fmt.Errorf("record %d header %d: value length past the end", i, j)
			}
			if vl > 0 {
				p = p[k+int(vl-1):]
			} else {
				p = p[k:]
			}
		}
	}
	if len(p) > 0 {
		return fmt.Errorf("%d bytes after the last record's headers", len(p))
	}
	return nil
}
