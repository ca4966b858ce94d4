package partlog

import "encoding/binary"

// Batch command encoding, version 1 (all integers are encoding/binary
// varints; "bytes?" is uvarint(len+1) then the bytes, 0 meaning nil):
//
//	byte    version (1)
//	varint  ProducerID
//	varint  BaseSeq
//	uvarint record count
//	uvarint total MsgID bytes, then every record's MsgID, concatenated
//	per record:
//	  varint  Timestamp minus the previous record's (the first: minus 0)
//	  bytes?  Key
//	  bytes?  Value
//	  uvarint len(MsgID)
//
// Timestamps are delta encoded because a leader stamps a batch's records
// within microseconds of each other. The MsgIDs are grouped so the decoder
// can turn them into one string per batch instead of one allocation per
// record. Offset and Epoch are not encoded: Append assigns them.
const batchVersion = 1

// minRecordBytes is the least a record body can take: one byte each for the
// timestamp delta, key, value and MsgID length.
const minRecordBytes = 4

// EncodeBatch returns the command encoding of b, in a buffer of exactly the
// right size: raft keeps the buffer and the decoded records point into it,
// so spare capacity would be held for as long as the records are.
func EncodeBatch(b Batch) []byte {
	return AppendBatch(make([]byte, 0, batchSize(b)), b)
}

// batchSize is the exact length of b's encoding.
func batchSize(b Batch) int {
	n := 1 + varintLen(b.ProducerID) + varintLen(int64(b.BaseSeq)) + uvarintLen(uint64(len(b.Records)))
	ids := 0
	var prev int64
	for i := range b.Records {
		r := &b.Records[i]
		ids += len(r.MsgID)
		n += varintLen(r.Timestamp-prev) + optBytesLen(r.Key) + optBytesLen(r.Value) + uvarintLen(uint64(len(r.MsgID)))
		prev = r.Timestamp
	}
	return n + uvarintLen(uint64(ids)) + ids
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

// AppendBatch appends the command encoding of b to dst, so a caller can
// reuse a buffer.
func AppendBatch(dst []byte, b Batch) []byte {
	dst = append(dst, batchVersion)
	dst = binary.AppendVarint(dst, b.ProducerID)
	dst = binary.AppendVarint(dst, int64(b.BaseSeq))
	dst = binary.AppendUvarint(dst, uint64(len(b.Records)))
	dst = appendMsgIDs(dst, b.Records)
	var prev int64
	for i := range b.Records {
		dst = appendRecordBody(dst, &b.Records[i], prev)
		prev = b.Records[i].Timestamp
	}
	return dst
}

// DecodeBatch decodes a command written by EncodeBatch. Damaged input is an
// error wrapping ErrCorrupt, never a panic, and counts are checked against
// the bytes actually present before anything is allocated.
//
// The records' Key and Value slices point into p (no copy: the raft entry
// already holds the bytes), so p must not be modified afterwards.
func DecodeBatch(p []byte) (Batch, error) {
	d := newDecoder(p, "batch")
	if v := d.byte("version"); d.err == nil && v != batchVersion {
		d.failf("unknown version %d; this build reads version %d", v, batchVersion)
	}
	var b Batch
	b.ProducerID = d.varint("producer id")
	b.BaseSeq = d.int32("base sequence")
	n := d.count("record count", minRecordBytes)
	ids := d.msgIDs()
	if d.err != nil {
		return Batch{}, d.err
	}
	b.Records = make([]Record, n)
	var prev int64
	idPos := 0
	for i := range b.Records {
		d.recordBody(&b.Records[i], prev, ids, &idPos)
		prev = b.Records[i].Timestamp
	}
	d.msgIDsUsed(ids, idPos)
	d.done()
	if d.err != nil {
		return Batch{}, d.err
	}
	return b, nil
}

// appendMsgIDs writes the MsgIDs of recs as one length-prefixed blob.
func appendMsgIDs(dst []byte, recs []Record) []byte {
	total := 0
	for i := range recs {
		total += len(recs[i].MsgID)
	}
	dst = binary.AppendUvarint(dst, uint64(total))
	for i := range recs {
		dst = append(dst, recs[i].MsgID...)
	}
	return dst
}

// appendRecordBody writes the fields a record carries in both batches and
// snapshots.
func appendRecordBody(dst []byte, r *Record, prevTS int64) []byte {
	// Subtraction wraps for extreme timestamps; decoding adds it back with
	// the same wrap, so every int64 survives.
	dst = binary.AppendVarint(dst, r.Timestamp-prevTS)
	dst = appendOptBytes(dst, r.Key)
	dst = appendOptBytes(dst, r.Value)
	return binary.AppendUvarint(dst, uint64(len(r.MsgID)))
}

// msgIDs reads the MsgID blob as one string; records take substrings of it,
// which share its memory.
func (d *decoder) msgIDs() string {
	n := d.uvarint("message id bytes")
	if d.err == nil && n > uint64(len(d.p)) {
		d.failf("message id bytes: length %d, but only %d bytes are left", n, len(d.p))
	}
	if d.err != nil {
		return ""
	}
	return string(d.raw(int(n), "message ids"))
}

// recordBody reads what appendRecordBody wrote, taking the MsgID from ids at
// *idPos.
func (d *decoder) recordBody(r *Record, prevTS int64, ids string, idPos *int) {
	r.Timestamp = prevTS + d.varint("timestamp")
	r.Key = d.optBytes("key")
	r.Value = d.optBytes("value")
	n := d.uvarint("message id length")
	if d.err != nil {
		return
	}
	if left := uint64(len(ids) - *idPos); n > left {
		d.failf("message id length %d, but only %d message id bytes are left", n, left)
		return
	}
	r.MsgID = ids[*idPos : *idPos+int(n)]
	*idPos += int(n)
}

// msgIDsUsed fails if the records did not use the whole MsgID blob.
func (d *decoder) msgIDsUsed(ids string, used int) {
	if d.err == nil && used != len(ids) {
		d.failf("records use %d of the %d message id bytes", used, len(ids))
	}
}
