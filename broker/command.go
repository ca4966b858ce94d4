package broker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mqlab/mqlab/broker/partlog"
)

// A partition's raft entries are small typed envelopes: one kind byte, then
// the kind's fields. The header (kind, request id, leader time, record
// count) is readable without decoding the records, which lets a replica
// count the records in its uncommitted tail cheaply.
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

func encodeProduce(reqID uint64, now int64, b partlog.Batch) []byte {
	buf := make([]byte, 0, 32)
	buf = append(buf, cmdProduce)
	buf = binary.AppendUvarint(buf, reqID)
	buf = binary.AppendVarint(buf, now)
	buf = binary.AppendUvarint(buf, uint64(len(b.Records)))
	return append(buf, partlog.EncodeBatch(b)...)
}

func encodeTick(now int64) []byte {
	buf := []byte{cmdTick}
	return binary.AppendVarint(buf, now)
}

// decodeHeader reads everything but the records; rest is the encoded batch.
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

func decodePartitionCmd(p []byte) (partitionCmd, error) {
	cmd, rest, err := decodeHeader(p)
	if err != nil || cmd.kind != cmdProduce {
		return cmd, err
	}
	cmd.batch, err = partlog.DecodeBatch(rest)
	if err != nil {
		return cmd, fmt.Errorf("%w: %v", errBadCommand, err)
	}
	return cmd, nil
}
