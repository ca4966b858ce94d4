package kafkawire

// Kafka record batches (magic 2): reading a producer's, with its CRC-32C
// checked and its records decompressed, and writing a fetch's.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchHeaderLen is the bytes of a v2 batch before its records; the CRC
// covers everything from the attributes (offset 21) on.
const (
	batchHeaderLen = 61
	crcFrom        = 21
)

// maxDecompressed bounds what one batch may decompress to, so a small
// frame cannot make a node allocate without limit.
const maxDecompressed = 64 << 20

// errBatch is a batch that cannot be taken as it is; code is how the
// answer says so.
type errBatch struct {
	code int16
	text string
}

func (e *errBatch) Error() string { return e.text }

func batchErr(code int16, format string, args ...any) error {
	return &errBatch{code: code, text: fmt.Sprintf(format, args...)}
}

// producedBatch is one batch a producer sent: raw as it arrived, and
// decoded, with what the partition's log needs to append raw without
// decoding it again.
type producedBatch struct {
	broker.Batch
	raw            []byte // the record batch, aliasing the request's frame
	kvBytes, minTS int64  // its records' key and value bytes, and least timestamp (unix nanoseconds)
}

// readBatches decodes the batches of one partition's produce.
func readBatches(b []byte) ([]producedBatch, error) {
	return readBatchesFor("", broker.TopicPartition{}, b)
}

// readBatchesFor decodes them naming each record for client (see msgID).
func readBatchesFor(client string, tp broker.TopicPartition, b []byte) ([]producedBatch, error) {
	var out []producedBatch
	for len(b) > 0 {
		if len(b) < 12 {
			return nil, batchErr(codeCorruptMessage, "the records end in the middle of a batch header")
		}
		length := int32(binary.BigEndian.Uint32(b[8:]))
		if length < batchHeaderLen-12 || int(length) > len(b)-12 {
			return nil, batchErr(codeCorruptMessage, "a batch says it is %d bytes long, but %d follow", length, len(b)-12)
		}
		raw := b[:12+int(length)]
		b = b[12+int(length):]
		pb, err := readBatch(client, tp, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, pb)
	}
	if len(out) == 0 {
		return nil, batchErr(codeInvalidRecord, "the produce carries no record batch")
	}
	return out, nil
}

func readBatch(client string, tp broker.TopicPartition, raw []byte) (producedBatch, error) {
	if raw[16] != 2 {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch of message format %d; mqlab reads format 2 (Kafka 0.11 and later)", raw[16])
	}
	// Unsafe reads alias raw instead of copying it: every frame has a
	// buffer of its own, and the broker copies the records into its batch.
	var kb kmsg.RecordBatch
	if err := kb.UnsafeReadFrom(raw); err != nil {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch does not decode: %v", err)
	}
	if got := crc32.Checksum(raw[crcFrom:], castagnoli); got != uint32(kb.CRC) {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch's CRC-32C is %08x, its bytes give %08x: it was damaged on the way", uint32(kb.CRC), got)
	}
	if kb.Attributes&0x20 != 0 || kb.Attributes&0x40 != 0 {
		return producedBatch{}, batchErr(codeInvalidRecord, "a transactional or control batch; mqlab has no transactions")
	}
	records, err := decompress(kb.Attributes&0x7, kb.Records)
	if err != nil {
		return producedBatch{}, err
	}
	if kb.NumRecords < 0 || int(kb.NumRecords) > len(records) {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch says it holds %d records in %d bytes", kb.NumRecords, len(records))
	}
	if kb.LastOffsetDelta != kb.NumRecords-1 {
		return producedBatch{}, batchErr(codeInvalidRecord, "a batch of %d records says its last offset delta is %d; a producer's batch numbers its records 0 to %d", kb.NumRecords, kb.LastOffsetDelta, kb.NumRecords-1)
	}
	pb := producedBatch{raw: raw, minTS: int64(1<<63 - 1)}
	if kb.ProducerID >= 0 {
		pb.ProducerID, pb.BaseSeq = partlog.EpochProducer(kb.ProducerID, kb.ProducerEpoch), kb.FirstSequence
	}
	pb.Records = make([]broker.BatchRecord, 0, kb.NumRecords)
	for i := int32(0); i < kb.NumRecords; i++ {
		l, n := binary.Varint(records)
		if n <= 0 || l < 0 || l > int64(len(records)-n) {
			return producedBatch{}, batchErr(codeCorruptMessage, "record %d of a batch is cut short", i)
		}
		var kr kmsg.Record
		if err := kr.UnsafeReadFrom(records[:n+int(l)]); err != nil {
			return producedBatch{}, batchErr(codeCorruptMessage, "record %d of a batch does not decode: %v", i, err)
		}
		records = records[n+int(l):]
		if kr.OffsetDelta != i {
			return producedBatch{}, batchErr(codeInvalidRecord, "record %d of a batch has offset delta %d; a producer's batch numbers its records 0, 1, 2, ...", i, kr.OffsetDelta)
		}
		ts := (kb.FirstTimestamp + kr.TimestampDelta64) * int64(time.Millisecond)
		pb.kvBytes += int64(len(kr.Key) + len(kr.Value))
		pb.minTS = min(pb.minTS, ts)
		var id string
		if client != "" {
			id = msgID(tp, kr.Key, kr.Value)
		}
		rec := broker.BatchRecord{Key: kr.Key, Value: kr.Value, Timestamp: ts, MsgID: id}
		for _, h := range kr.Headers {
			rec.Headers = append(rec.Headers, broker.Header{Key: h.Key, Value: h.Value})
		}
		pb.Records = append(pb.Records, rec)
	}
	if len(pb.Records) == 0 {
		return producedBatch{}, batchErr(codeInvalidRecord, "an empty batch")
	}
	return pb, nil
}

// The partition logs keep a compressed batch compressed and read its
// records with this listener's codecs.
func init() {
	partlog.SetDecompressor(func(codec int16, data []byte) ([]byte, error) { return decompress(codec, data) })
}

// decompress undoes a batch's compression codec.
func decompress(codec int16, data []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case 0:
		return data, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, batchErr(codeCorruptMessage, "gzip records do not decompress: %v", err)
		}
		r = zr
	case 2:
		out, err := unsnappy(data)
		if err != nil {
			return nil, batchErr(codeCorruptMessage, "snappy records do not decompress: %v", err)
		}
		return out, nil
	case 3:
		r = lz4.NewReader(bytes.NewReader(data))
	case 4:
		zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderMaxMemory(maxDecompressed), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, batchErr(codeCorruptMessage, "zstd records do not decompress: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, batchErr(codeUnsupportedCompression, "compression codec %d; Kafka's are 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressed+1))
	if err != nil {
		return nil, batchErr(codeCorruptMessage, "%s records do not decompress: %v", codecName(codec), err)
	}
	if len(out) > maxDecompressed {
		return nil, batchErr(codeCorruptMessage, "%s records decompress to more than %d MiB", codecName(codec), maxDecompressed>>20)
	}
	return out, nil
}

func codecName(c int16) string {
	return [...]string{"uncompressed", "gzip", "snappy", "lz4", "zstd"}[c]
}

// xerialMagic starts snappy data framed the way the Java client frames it.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// unsnappy decodes a raw snappy block, or the Java client's framing of
// several: a 16-byte header, then blocks each after its big-endian length.
func unsnappy(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return decodeSnappyBlock(nil, data)
	}
	if len(data) < 16 {
		return nil, errors.New("the framing header is cut short")
	}
	data = data[16:]
	var out []byte
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, errors.New("a block's length is cut short")
		}
		n := binary.BigEndian.Uint32(data)
		data = data[4:]
		if uint64(n) > uint64(len(data)) {
			return nil, fmt.Errorf("a block says %d bytes, %d follow", n, len(data))
		}
		var err error
		if out, err = decodeSnappyBlock(out, data[:n]); err != nil {
			return nil, err
		}
		data = data[n:]
	}
	return out, nil
}

func decodeSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if len(dst)+n > maxDecompressed {
		return nil, fmt.Errorf("it decompresses to more than %d MiB", maxDecompressed>>20)
	}
	out, err := s2.Decode(nil, block)
	if err != nil || dst == nil {
		return out, err
	}
	return append(dst, out...), nil
}

// appendBatches writes records as uncompressed v2 batches, one per run of
// records written in the same epoch (the batch's partition leader epoch).
func appendBatches(dst []byte, recs []broker.Record) []byte {
	size := 0
	for i := range recs {
		size += len(recs[i].Key) + len(recs[i].Value) + 12
	}
	dst = slices.Grow(dst, size+batchHeaderLen)
	for len(recs) > 0 {
		n := 1
		for n < len(recs) && recs[n].Epoch == recs[0].Epoch && recs[n].Offset == recs[n-1].Offset+1 {
			n++
		}
		dst = appendBatch(dst, recs[:n])
		recs = recs[n:]
	}
	return dst
}

// appendBatch writes recs, consecutive records of one epoch, as one
// batch, as the partition's segment files hold them but without the
// message id mqlab keeps beside each record: a client sees only its own
// headers.
func appendBatch(dst []byte, recs []broker.Record) []byte {
	plain := make([]partlog.Record, len(recs))
	for i, r := range recs {
		plain[i] = partlog.Record{Offset: r.Offset, Epoch: r.Epoch, Timestamp: r.Timestamp.UnixNano(), Key: r.Key, Value: r.Value, Headers: r.Headers}
	}
	return partlog.AppendKafkaBatch(dst, plain, 0, 0, recs[0].Epoch)
}
