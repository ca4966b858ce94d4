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

// producedBatch is one batch a producer sent, as it arrived, with what
// the partition's log needs to append it without reading it again, and
// its records decoded only when an observer is to hear of them.
type producedBatch struct {
	broker.WireBatch
	records []broker.BatchRecord // nil unless asked for
}

// readBatches checks the batches of one partition's produce and decodes
// their records.
func readBatches(b []byte) ([]producedBatch, error) {
	return readBatchesFor("", broker.TopicPartition{}, b, true, nil)
}

// readBatchesFor checks the batches of one partition's produce, and with
// records set decodes their records too, naming each for client (see
// msgID) when there is one. Without records, scratch (when not nil) is
// a buffer to decompress into, kept for the next call.
func readBatchesFor(client string, tp broker.TopicPartition, b []byte, records bool, scratch *[]byte) ([]producedBatch, error) {
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
		pb, err := readBatch(client, tp, raw, records, scratch)
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

// readBatch checks one batch, raw (at least a header long), in one walk
// over its records: its CRC, that every record is framed whole and
// numbered by its place, as a producer writes them. The log keeps raw as
// it is, so nothing is copied; decoded records alias raw (or, for a
// compressed batch, its decompressed records). A batch whose records are
// not kept may be decompressed into scratch.
func readBatch(client string, tp broker.TopicPartition, raw []byte, keep bool, scratch *[]byte) (producedBatch, error) {
	be := binary.BigEndian
	if raw[16] != 2 {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch of message format %d; mqlab reads format 2 (Kafka 0.11 and later)", raw[16])
	}
	if want, got := be.Uint32(raw[17:]), crc32.Checksum(raw[crcFrom:], castagnoli); got != want {
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch's CRC-32C is %08x, its bytes give %08x: it was damaged on the way", want, got)
	}
	attrs := int16(be.Uint16(raw[21:]))
	if attrs&0x70 != 0 {
		return producedBatch{}, batchErr(codeInvalidRecord, "a transactional or control batch; mqlab has no transactions")
	}
	codec := attrs & 0x7
	var records []byte
	var err error
	if keep || scratch == nil {
		records, err = decompress(codec, raw[batchHeaderLen:])
	} else {
		records, err = decompressReusing(*scratch, codec, raw[batchHeaderLen:])
		if err == nil && codec == codecSnappy && cap(records) <= scratchMax {
			*scratch = records[:0]
		}
	}
	if err != nil {
		return producedBatch{}, err
	}
	count, lastDelta := int32(be.Uint32(raw[57:])), int32(be.Uint32(raw[23:]))
	firstTS, maxTS := int64(be.Uint64(raw[27:])), int64(be.Uint64(raw[35:]))
	switch {
	case !partlog.InNanos(firstTS) || !partlog.InNanos(maxTS):
		return producedBatch{}, batchErr(codeInvalidTimestamp, "a batch's first and max timestamps are %d and %d ms from 1970; mqlab keeps a record's time in nanoseconds, which reach from 1677 to 2262", firstTS, maxTS)
	case count < 0 || int(count) > len(records):
		return producedBatch{}, batchErr(codeCorruptMessage, "a batch says it holds %d records in %d bytes", count, len(records))
	case count == 0:
		return producedBatch{}, batchErr(codeInvalidRecord, "an empty batch")
	case lastDelta != count-1:
		return producedBatch{}, batchErr(codeInvalidRecord, "a batch of %d records says its last offset delta is %d; a producer's batch numbers its records 0 to %d", count, lastDelta, count-1)
	}
	pb := producedBatch{WireBatch: broker.WireBatch{Raw: raw, Count: int(count), MinTS: int64(1<<63 - 1), Unkeyed: -1}}
	if keep {
		pb.records = make([]broker.BatchRecord, 0, count)
	}
	for i := range count {
		r, rest, ok := nextRecord(records)
		if !ok {
			return producedBatch{}, batchErr(codeCorruptMessage, "record %d of a batch is cut short or does not decode", i)
		}
		records = rest
		if r.offsetDelta != int64(i) {
			return producedBatch{}, batchErr(codeInvalidRecord, "record %d of a batch has offset delta %d; a producer's batch numbers its records 0, 1, 2, ...", i, r.offsetDelta)
		}
		ms, ok := partlog.RecordMillis(firstTS, r.tsDelta)
		if !ok {
			return producedBatch{}, batchErr(codeInvalidTimestamp, "record %d of a batch is stamped %d ms from 1970; mqlab keeps a record's time in nanoseconds, which reach from 1677 to 2262", i, firstTS+r.tsDelta)
		}
		ts := ms * int64(time.Millisecond)
		pb.KVBytes += int64(len(r.key) + len(r.value))
		pb.MinTS = min(pb.MinTS, ts)
		if r.key == nil && pb.Unkeyed < 0 {
			pb.Unkeyed = int(i)
		}
		if keep {
			rec := broker.BatchRecord{Key: r.key, Value: r.value, Timestamp: ts, Headers: r.decodeHeaders()}
			if client != "" {
				rec.MsgID = msgID(tp, r.key, r.value)
			}
			pb.records = append(pb.records, rec)
		}
	}
	if len(records) > 0 {
		return producedBatch{}, batchErr(codeCorruptMessage, "%d bytes follow a batch's last record", len(records))
	}
	return pb, nil
}

// wireRecord is one record of a batch, its fields slices of the batch.
type wireRecord struct {
	tsDelta, offsetDelta int64
	key, value           []byte // nil for a null key or value
	headers              []byte // the header count and the headers, as sent
	headerCount          int
}

// nextRecord reads the record at the start of p as Kafka frames it (a
// varint length, then attributes, timestamp delta, offset delta, key,
// value, headers, filling exactly that length); ok is false when it does
// not hold together.
func nextRecord(p []byte) (r wireRecord, rest []byte, ok bool) {
	l, n := binary.Varint(p)
	if n <= 0 || l < 1 || l > int64(len(p)-n) {
		return r, nil, false
	}
	rest, p = p[n+int(l):], p[n+1:n+int(l)] // past the attributes
	if r.tsDelta, n = binary.Varint(p); n <= 0 {
		return r, nil, false
	}
	p = p[n:]
	if r.offsetDelta, n = binary.Varint(p); n <= 0 {
		return r, nil, false
	}
	p = p[n:]
	if r.key, p, ok = bytesField(p); !ok {
		return r, nil, false
	}
	if r.value, p, ok = bytesField(p); !ok {
		return r, nil, false
	}
	r.headers = p
	hc, n := binary.Varint(p)
	if n <= 0 || hc < 0 || hc > int64(len(p)) {
		return r, nil, false
	}
	p = p[n:]
	for range hc {
		if _, p, ok = bytesField(p); !ok {
			return r, nil, false
		}
		if _, p, ok = bytesField(p); !ok {
			return r, nil, false
		}
	}
	r.headerCount = int(hc)
	return r, rest, len(p) == 0
}

// bytesField reads a varint length and that many bytes (-1: null).
func bytesField(p []byte) (b, rest []byte, ok bool) {
	l, n := binary.Varint(p)
	if n <= 0 || l < -1 || l > int64(len(p)-n) {
		return nil, nil, false
	}
	p = p[n:]
	if l < 0 {
		return nil, p, true
	}
	return p[:l:l], p[l:], true
}

// decodeHeaders returns r's headers, which nextRecord has checked.
func (r *wireRecord) decodeHeaders() []broker.Header {
	if r.headerCount == 0 {
		return nil
	}
	_, n := binary.Varint(r.headers)
	p := r.headers[n:]
	hs := make([]broker.Header, r.headerCount)
	for i := range hs {
		var k []byte
		k, p, _ = bytesField(p)
		hs[i].Key = string(k)
		hs[i].Value, p, _ = bytesField(p)
	}
	return hs
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

// codecSnappy is Kafka's number for snappy, kgo's default codec.
const codecSnappy = 2

// scratchMax is the largest decompression buffer a connection keeps.
const scratchMax = 1 << 20

// decompressReusing is decompress, decoding a raw snappy block into buf
// when buf is large enough, for records that are checked and dropped.
func decompressReusing(buf []byte, codec int16, data []byte) ([]byte, error) {
	if codec != codecSnappy || bytes.HasPrefix(data, xerialMagic) {
		return decompress(codec, data)
	}
	n, err := s2.DecodedLen(data)
	if err == nil && n > maxDecompressed {
		err = fmt.Errorf("it decompresses to more than %d MiB", maxDecompressed>>20)
	}
	var out []byte
	if err == nil {
		out, err = s2.Decode(buf[:cap(buf)], data)
	}
	if err != nil {
		return nil, batchErr(codeCorruptMessage, "snappy records do not decompress: %v", err)
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
