package partlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Kafka's record batch, format 2 (magic 2), as its .log files hold them:
//
//	int64  base offset
//	int32  batch length (the bytes after this field)
//	int32  partition leader epoch
//	int8   magic (2)
//	uint32 CRC-32C of everything after it
//	int16  attributes (compression codec, timestamp type, transactional, control)
//	int32  last offset delta
//	int64  first timestamp, milliseconds
//	int64  max timestamp, milliseconds
//	int64  producer id (-1: not idempotent)
//	int16  producer epoch
//	int32  base sequence
//	int32  record count
//	records: varint length, int8 attributes, varint timestamp delta,
//	  varint offset delta, varint key length (-1 null), key, varint value
//	  length, value, varint header count, then per header varint key
//	  length, key, varint value length (-1 null), value
//
// The base offset and the leader epoch sit before the CRC, outside what it
// covers: a broker sets them on a batch without recomputing the checksum.
const (
	KafkaBatchHeaderLen = 61
	kafkaCRCFrom        = 21 // the CRC covers bytes from here to the end
)

// MsgIDHeader is the record header that carries a record's message id
// (MsgID) in a segment file: Kafka's records have no field for it.
const MsgIDHeader = "mqlab.msg-id"

// AppendKafkaBatch appends recs, consecutive records of one epoch, as one
// uncompressed Kafka record batch v2 written in epoch, with producer id
// pid and base sequence baseSeq (pid 0: no producer id, as a plain
// producer's). A record's MsgID goes in a header of its own
// (MsgIDHeader), after the producer's; a record without one has none.
// The segment files and the Kafka listener's fetch answers both write
// their batches with it.
func AppendKafkaBatch(dst []byte, recs []Record, pid int64, baseSeq int32, epoch uint64) []byte {
	return appendKafkaBatch(dst, recs, recs[0].Offset, recs[len(recs)-1].Offset, pid, baseSeq, epoch, false)
}

// appendKafkaBatch is AppendKafkaBatch for a batch written at base whose
// last offset was last: a compacted batch keeps both, as Kafka's cleaner
// does, though its first and last records may be gone. With ordinal, a
// record's offset delta is its place in recs, as a producer numbers a
// batch's records before they have offsets, and their Offset is not read.
func appendKafkaBatch(dst []byte, recs []Record, base, last int64, pid int64, baseSeq int32, epoch uint64, ordinal bool) []byte {
	start := len(dst)
	first := recs[0].Timestamp / 1e6
	maxTS := first
	for i := range recs {
		maxTS = max(maxTS, recs[i].Timestamp/1e6)
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(base))
	dst = append(dst, 0, 0, 0, 0) // length, below
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(epoch)))
	dst = append(dst, 2)          // magic
	dst = append(dst, 0, 0, 0, 0) // CRC, below
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(last-base)))
	dst = binary.BigEndian.AppendUint64(dst, uint64(first))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTS))
	if pid == 0 {
		dst = binary.BigEndian.AppendUint64(dst, ^uint64(0)) // -1: not idempotent
		dst = binary.BigEndian.AppendUint16(dst, ^uint16(0))
		dst = binary.BigEndian.AppendUint32(dst, ^uint32(0))
	} else {
		dst = binary.BigEndian.AppendUint64(dst, uint64(pid))
		dst = binary.BigEndian.AppendUint16(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, uint32(baseSeq))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(recs)))
	for i := range recs {
		r := &recs[i]
		tsDelta, offDelta := r.Timestamp/1e6-first, r.Offset-base
		if ordinal {
			offDelta = int64(i)
		}
		headers := len(r.Headers)
		if r.MsgID != "" {
			headers++
		}
		dst = binary.AppendVarint(dst, int64(kafkaRecordLen(r, tsDelta, offDelta)))
		dst = append(dst, 0) // attributes
		dst = binary.AppendVarint(dst, tsDelta)
		dst = binary.AppendVarint(dst, offDelta)
		dst = appendKafkaBytes(dst, r.Key)
		dst = appendKafkaBytes(dst, r.Value)
		dst = binary.AppendVarint(dst, int64(headers))
		for _, h := range r.Headers {
			dst = binary.AppendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendKafkaBytes(dst, h.Value)
		}
		if r.MsgID != "" {
			dst = binary.AppendVarint(dst, int64(len(MsgIDHeader)))
			dst = append(dst, MsgIDHeader...)
			dst = binary.AppendVarint(dst, int64(len(r.MsgID)))
			dst = append(dst, r.MsgID...)
		}
	}
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start-12))
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+kafkaCRCFrom:], castagnoli))
	return dst
}

// kafkaRecordLen is the length of record r's body in a Kafka batch (what
// its leading varint says), written with these deltas.
func kafkaRecordLen(r *Record, tsDelta, offDelta int64) int {
	headers := len(r.Headers)
	if r.MsgID != "" {
		headers++
	}
	n := 1 + varintLen(tsDelta) + varintLen(offDelta) + kafkaBytesLen(r.Key) + kafkaBytesLen(r.Value) + varintLen(int64(headers))
	if r.MsgID != "" {
		n += varintLen(int64(len(MsgIDHeader))) + len(MsgIDHeader) + varintLen(int64(len(r.MsgID))) + len(r.MsgID)
	}
	for _, h := range r.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + kafkaBytesLen(h.Value)
	}
	return n
}

// kafkaBatchLen is the length of appendKafkaBatch's encoding of recs with
// ordinal offsets.
func kafkaBatchLen(recs []Record) int {
	n := KafkaBatchHeaderLen
	first := recs[0].Timestamp / 1e6
	for i := range recs {
		l := kafkaRecordLen(&recs[i], recs[i].Timestamp/1e6-first, int64(i))
		n += varintLen(int64(l)) + l
	}
	return n
}

func appendKafkaBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func kafkaBytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

// KafkaBatch is what a Kafka record batch's header says, and whether its
// CRC matches its bytes: what kafka-dump-log prints for each batch.
type KafkaBatch struct {
	BaseOffset     int64
	Length         int32 // the batch length field: bytes after it
	LeaderEpoch    int32
	Magic          int8
	CRC            uint32
	CRCValid       bool
	Attributes     int16
	LastOffset     int64 // base offset + last offset delta
	FirstTimestamp int64 // milliseconds
	MaxTimestamp   int64 // milliseconds
	ProducerID     int64
	ProducerEpoch  int16
	BaseSequence   int32
	Count          int32
}

// Size is the bytes the batch takes in a file.
func (b KafkaBatch) Size() int64 { return 12 + int64(b.Length) }

// ParseKafkaBatch reads the Kafka record batch at the start of p and checks
// its CRC. It fails with an error wrapping ErrCorrupt when p holds less
// than a whole batch or the header is impossible; a batch whose CRC does
// not match is returned with CRCValid false and no error, so a caller can
// report it.
func ParseKafkaBatch(p []byte) (KafkaBatch, error) {
	if len(p) < KafkaBatchHeaderLen {
		return KafkaBatch{}, fmt.Errorf("%w: %d bytes left, but a batch header takes %d", ErrCorrupt, len(p), KafkaBatchHeaderLen)
	}
	be := binary.BigEndian
	b := KafkaBatch{
		BaseOffset:     int64(be.Uint64(p)),
		Length:         int32(be.Uint32(p[8:])),
		LeaderEpoch:    int32(be.Uint32(p[12:])),
		Magic:          int8(p[16]),
		CRC:            be.Uint32(p[17:]),
		Attributes:     int16(be.Uint16(p[21:])),
		FirstTimestamp: int64(be.Uint64(p[27:])),
		MaxTimestamp:   int64(be.Uint64(p[35:])),
		ProducerID:     int64(be.Uint64(p[43:])),
		ProducerEpoch:  int16(be.Uint16(p[51:])),
		BaseSequence:   int32(be.Uint32(p[53:])),
		Count:          int32(be.Uint32(p[57:])),
	}
	b.LastOffset = b.BaseOffset + int64(int32(be.Uint32(p[23:])))
	switch {
	case b.Magic != 2:
		return b, fmt.Errorf("%w: a batch of message format %d at offset %d; this reads format 2", ErrCorrupt, b.Magic, b.BaseOffset)
	case b.Length < KafkaBatchHeaderLen-12:
		return b, fmt.Errorf("%w: a batch says it is %d bytes long, less than its own header", ErrCorrupt, b.Length)
	case int64(b.Length) > int64(len(p)-12):
		return b, fmt.Errorf("%w: a batch says it is %d bytes long, but %d follow (a torn write?)", ErrCorrupt, b.Length, len(p)-12)
	}
	b.CRCValid = crc32.Checksum(p[kafkaCRCFrom:12+int(b.Length)], castagnoli) == b.CRC
	return b, nil
}
