// Package partcmd is the raft entries of a partition: small typed
// envelopes around the record batch the partition's log keeps as it is,
// and the slab a leader carves their buffers from.
package partcmd

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mqlab/mqlab/broker/partlog"
)

// A partition's raft entries are small typed envelopes: one kind byte, then
// the kind's fields. A produce entry is
//
//	byte    Produce
//	uvarint request id
//	varint  the leader's clock, unix nanos
//	uvarint record count (the batch's own, repeated here)
//	        the record batch: the lab's own records as partlog encodes
//	        them (AppendProduceBatch: in Kafka's format, as the segment
//	        files keep them, where they allow it), or a Kafka client's
//	        batch as it arrived (AppendWireBatch)
//
// and the batch is what the partition's log stores, as it is: the state
// machine's Apply hands the entry's bytes to partlog.Log.AppendEncoded
// without decoding a record. The header (kind, request id, leader time,
// record count) is readable without even looking at the batch, which lets
// a replica count the records in its uncommitted tail cheaply; Apply
// refuses an entry whose count disagrees with its batch's (CheckCount).
const (
	Produce byte = 1 // a batch of records from one producer request
	Tick    byte = 2 // the leader's clock, so idle partitions apply retention too
	// Compact asks every replica for one compaction pass at the leader's
	// clock: the leader decides when (a dirty ratio, or the lab's
	// compact command), so every replica cleans at the same entry.
	Compact byte = 3
)

// Cmd is one decoded entry.
type Cmd struct {
	Kind  byte
	ReqID uint64
	Now   int64         // the leader's clock when it proposed the entry, unix nanos
	Count int           // records in the batch
	Batch partlog.Batch // only from Decode
	// Kafka: the batch is a Kafka client's, kept as it arrived; its
	// records have no message ids (partlog.Log.WireMsgID names them).
	Kafka bool
}

// ErrBad is an entry that does not decode.
var ErrBad = errors.New("malformed partition command")

// EncodeProduce builds a produce entry in one buffer of exactly its size,
// the records in the lab's own encoding: raft keeps the buffer, and the
// partition log keeps the batch inside it.
func EncodeProduce(reqID uint64, now int64, b partlog.Batch) []byte {
	return EncodeProduceIn(func(n int) []byte { return make([]byte, 0, n) }, reqID, now, b, false)
}

// EncodeProduceIn is EncodeProduce with the buffer from alloc, which
// returns a zero-length buffer of capacity n. For replicas that write
// segment files (files) the records go in Kafka's format, as the files
// keep them (partlog.AppendProduceBatch), so that no replica turns them
// from one format into another; without files the lab's own encoding is
// smaller (a Kafka record's framing and its id header add about a fifth
// to a record of 100 bytes) and quicker to check.
func EncodeProduceIn(alloc func(n int) []byte, reqID uint64, now int64, b partlog.Batch, files bool) []byte {
	var hdr [1 + 3*binary.MaxVarintLen64]byte
	h := append(hdr[:0], Produce)
	h = binary.AppendUvarint(h, reqID)
	h = binary.AppendVarint(h, now)
	h = binary.AppendUvarint(h, uint64(len(b.Records)))
	if !files {
		return partlog.AppendBatch(append(alloc(len(h)+partlog.BatchSize(b)), h...), b)
	}
	return partlog.AppendProduceBatch(append(alloc(len(h)+partlog.ProduceBatchSize(b)), h...), b)
}

// EncodeProduceKafka is EncodeProduceIn for a batch a Kafka client sent,
// carried as it arrived (partlog.AppendWireBatch): raw is the record
// batch, count its records, kvBytes their keys' and values' bytes and
// minTS their least timestamp.
func EncodeProduceKafka(alloc func(n int) []byte, reqID uint64, now int64, raw []byte, count int, kvBytes, minTS int64) []byte {
	var hdr [1 + 3*binary.MaxVarintLen64]byte
	h := append(hdr[:0], Produce)
	h = binary.AppendUvarint(h, reqID)
	h = binary.AppendVarint(h, now)
	h = binary.AppendUvarint(h, uint64(count))
	buf := alloc(len(h) + partlog.WireBatchSize(raw, kvBytes, minTS))
	return partlog.AppendWireBatch(append(buf, h...), raw, kvBytes, minTS)
}

// EncodeTick builds a tick entry: the leader's clock, unix nanos.
func EncodeTick(now int64) []byte {
	buf := []byte{Tick}
	return binary.AppendVarint(buf, now)
}

// EncodeCompact builds a compact entry: the leader's clock, unix nanos.
func EncodeCompact(now int64) []byte {
	return binary.AppendVarint([]byte{Compact}, now)
}

// DecodeHeader reads everything but the records; rest is the encoded batch
// (a slice of p, not a copy).
func DecodeHeader(p []byte) (cmd Cmd, rest []byte, err error) {
	if len(p) == 0 {
		return cmd, nil, ErrBad
	}
	cmd.Kind = p[0]
	p = p[1:]
	switch cmd.Kind {
	case Produce:
		id, n := binary.Uvarint(p)
		if n <= 0 {
			return cmd, nil, ErrBad
		}
		p = p[n:]
		now, n := binary.Varint(p)
		if n <= 0 {
			return cmd, nil, ErrBad
		}
		p = p[n:]
		count, n := binary.Uvarint(p)
		if n <= 0 || count > uint64(len(p)) {
			return cmd, nil, ErrBad
		}
		cmd.ReqID, cmd.Now, cmd.Count = id, now, int(count)
		return cmd, p[n:], nil
	case Tick, Compact:
		now, n := binary.Varint(p)
		if n <= 0 {
			return cmd, nil, ErrBad
		}
		cmd.Now = now
		return cmd, nil, nil
	}
	return cmd, nil, fmt.Errorf("%w: unknown kind %d", ErrBad, cmd.Kind)
}

// Decode decodes the records too; only the display of a
// replica's uncommitted tail needs them.
func Decode(p []byte) (Cmd, error) {
	cmd, rest, err := DecodeHeader(p)
	if err != nil || cmd.Kind != Produce {
		return cmd, err
	}
	cmd.Kafka = partlog.KafkaBatchOf(rest) != nil
	cmd.Batch, err = partlog.DecodeBatch(rest)
	if err != nil {
		return cmd, fmt.Errorf("%w: %v", ErrBad, err)
	}
	if len(cmd.Batch.Records) != cmd.Count {
		return cmd, fmt.Errorf("%w: the header counts %d records, the batch holds %d", ErrBad, cmd.Count, len(cmd.Batch.Records))
	}
	return cmd, nil
}

// CheckCount fails if a produce entry's header and batch disagree about the
// record count, which would make a replica's count of its uncommitted tail
// differ from what Apply appends.
func CheckCount(cmd Cmd, batch []byte) error {
	h, err := partlog.ParseBatchHeader(batch)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBad, err)
	}
	if h.Count != cmd.Count {
		return fmt.Errorf("%w: the header counts %d records, the batch holds %d", ErrBad, cmd.Count, h.Count)
	}
	return nil
}
