package broker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mqlab/mqlab/broker/partlog"
)

// A partition's raft entries are small typed envelopes: one kind byte, then
// the kind's fields. A produce entry is
//
//	byte    cmdProduce
//	uvarint request id
//	varint  the leader's clock, unix nanos
//	uvarint record count (the batch's own, repeated here)
//	        the record batch, encoded by partlog (AppendBatch)
//
// and the batch is what the partition's log stores, as it is: Apply hands
// the entry's bytes to partlog.Log.AppendEncoded without decoding a record.
// The header (kind, request id, leader time, record count) is readable
// without even looking at the batch, which lets a replica count the records
// in its uncommitted tail cheaply; Apply refuses an entry whose count
// disagrees with its batch's.
const (
	cmdProduce byte = 1 // a batch of records from one producer request
	cmdTick    byte = 2 // the leader's clock, so idle partitions apply retention too
)

type partitionCmd struct {
	kind  byte
	reqID uint64
	now   int64 // the leader's clock when it proposed the entry, unix nanos
	count int   // records in the batch
	batch partlog.Batch
}

var errBadCommand = errors.New("malformed partition command")

// encodeProduce builds a produce entry in one buffer of exactly its size:
// raft keeps the buffer, and the partition log keeps the batch inside it.
func encodeProduce(reqID uint64, now int64, b partlog.Batch) []byte {
	return encodeProduceIn(func(n int) []byte { return make([]byte, 0, n) }, reqID, now, b)
}

// encodeProduceIn is encodeProduce with the buffer from alloc, which
// returns a zero-length buffer of capacity n.
func encodeProduceIn(alloc func(n int) []byte, reqID uint64, now int64, b partlog.Batch) []byte {
	var hdr [1 + 3*binary.MaxVarintLen64]byte
	h := append(hdr[:0], cmdProduce)
	h = binary.AppendUvarint(h, reqID)
	h = binary.AppendVarint(h, now)
	h = binary.AppendUvarint(h, uint64(len(b.Records)))
	buf := alloc(len(h) + partlog.BatchSize(b))
	return partlog.AppendBatch(append(buf, h...), b)
}

func encodeTick(now int64) []byte {
	buf := []byte{cmdTick}
	return binary.AppendVarint(buf, now)
}

// decodeHeader reads everything but the records; rest is the encoded batch
// (a slice of p, not a copy).
func decodeHeader(p []byte) (cmd partitionCmd, rest []byte, err error) {
	if len(p) == 0 {
		return cmd, nil, errBadCommand
	}
	cmd.kind = p[0]
	p = p[1:]
	switch cmd.kind {
	case cmdProduce:
		id, n := binary.Uvarint(p)
		if n <= 0 {
			return cmd, nil, errBadCommand
		}
		p = p[n:]
		now, n := binary.Varint(p)
		if n <= 0 {
			return cmd, nil, errBadCommand
		}
		p = p[n:]
		count, n := binary.Uvarint(p)
		if n <= 0 || count > uint64(len(p)) {
			return cmd, nil, errBadCommand
		}
		cmd.reqID, cmd.now, cmd.count = id, now, int(count)
		return cmd, p[n:], nil
	case cmdTick:
		now, n := binary.Varint(p)
		if n <= 0 {
			return cmd, nil, errBadCommand
		}
		cmd.now = now
		return cmd, nil, nil
	}
	return cmd, nil, fmt.Errorf("%w: unknown kind %d", errBadCommand, cmd.kind)
}

// decodePartitionCmd decodes the records too; only the display of a
// replica's uncommitted tail needs them.
func decodePartitionCmd(p []byte) (partitionCmd, error) {
	cmd, rest, err := decodeHeader(p)
	if err != nil || cmd.kind != cmdProduce {
		return cmd, err
	}
	cmd.batch, err = partlog.DecodeBatch(rest)
	if err != nil {
		return cmd, fmt.Errorf("%w: %v", errBadCommand, err)
	}
	if len(cmd.batch.Records) != cmd.count {
		return cmd, fmt.Errorf("%w: the header counts %d records, the batch holds %d", errBadCommand, cmd.count, len(cmd.batch.Records))
	}
	return cmd, nil
}

// checkCount fails if a produce entry's header and batch disagree about the
// record count, which would make a replica's count of its uncommitted tail
// differ from what Apply appends.
func checkCount(cmd partitionCmd, batch []byte) error {
	h, err := partlog.ParseBatchHeader(batch)
	if err != nil {
		return fmt.Errorf("%w: %v", errBadCommand, err)
	}
	if h.Count != cmd.count {
		return fmt.Errorf("%w: the header counts %d records, the batch holds %d", errBadCommand, cmd.count, h.Count)
	}
	return nil
}
