package partlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// Version 6 is a Kafka record batch (magic 2) kept as a Kafka client sent
// it, behind a short envelope:
//
//	byte    6
//	uvarint the key+value bytes of its records
//	varint  its least record timestamp, unix nanoseconds
//	        the record batch, byte for byte as it arrived
//
// The Kafka listener checks the batch's CRC once, on the leader; the raft
// entry carries these bytes, every replica keeps them, and its segment
// file gets the same batch with only the base offset and the partition
// leader epoch set (fields before the CRC, as Kafka sets them). A
// compressed batch stays compressed: it is decompressed only to read its
// records for the lab's own views and consumers.
//
// The envelope holds what the log needs on every append and the batch
// header does not say, so that no replica decompresses to append.
//
// A record of such a batch carries no message id; a log with a Name
// derives one from its name, key and value (WireMsgID), the same on
// every replica and after a restart, and the same for a retried copy of
// the record, so the lab sees a retry's duplicate as one message twice.
const batchVersionKafka = 6

// Version 9 is a batch of the lab's own records in Kafka's format, as the
// leader that took them wrote it (AppendProduceBatch): version 6's
// envelope, then a record batch whose records carry their message ids in
// a header of their own (MsgIDHeader), as the segment files hold them.
// Like a client's batch, every replica keeps these bytes and its file
// gets them with only the base offset and the leader epoch set: no
// replica turns one format into another. A batch of the lab's that its
// file would not give back exactly (a timestamp finer than a
// millisecond, a header of the id's name) is written in version 2 or 3
// instead.
const batchVersionLab = 9

// Kafka batch attributes this package reads.
const (
	kafkaCodecMask     = 0x07
	kafkaTransactional = 0x10
	kafkaControl       = 0x20
)

// WireBatchSize is the length of AppendWireBatch's encoding of raw.
func WireBatchSize(raw []byte, kvBytes, minTS int64) int {
	return envelopeLen(kvBytes, minTS) + len(raw)
}

// AppendWireBatch appends the version 6 encoding of raw, a Kafka record
// batch a client sent, whose records hold kvBytes of keys and values and
// whose least timestamp is minTS (unix nanoseconds), both from the
// caller's own check of the batch.
func AppendWireBatch(dst, raw []byte, kvBytes, minTS int64) []byte {
	return appendEnvelope(dst, batchVersionKafka, raw, kvBytes, minTS)
}

// appendEnvelope appends a version 6 or 9 batch: version, the envelope,
// then the record batch raw.
func appendEnvelope(dst []byte, version byte, raw []byte, kvBytes, minTS int64) []byte {
	return append(appendEnvelopeHeader(dst, version, kvBytes, minTS), raw...)
}

// appendEnvelopeHeader appends what comes before a version 6 or 9
// batch's record batch: the version and the envelope.
func appendEnvelopeHeader(dst []byte, version byte, kvBytes, minTS int64) []byte {
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(kvBytes))
	return binary.AppendVarint(dst, minTS)
}

// envelopeLen is appendEnvelopeHeader's length.
func envelopeLen(kvBytes, minTS int64) int {
	return 1 + uvarintLen(uint64(kvBytes)) + varintLen(minTS)
}

// ProduceBatchSize is the length of AppendProduceBatch's encoding of b.
func ProduceBatchSize(b Batch) int {
	if !labKafka(b) {
		return BatchSize(b)
	}
	kv, minTS := kvAndMinTS(b.Records)
	return envelopeLen(kv, minTS) + kafkaBatchLen(b.Records)
}

// AppendProduceBatch appends b as a leader proposes a batch of the lab's
// own records: in Kafka's format (version 9), which every replica's
// segment file then takes as it is, when the file gives the records
// back exactly; otherwise in the lab's own (AppendBatch).
func AppendProduceBatch(dst []byte, b Batch) []byte {
	if !labKafka(b) {
		return AppendBatch(dst, b)
	}
	kv, minTS := kvAndMinTS(b.Records)
	dst = appendEnvelopeHeader(dst, batchVersionLab, kv, minTS)
	return appendKafkaBatch(dst, b.Records, 0, int64(len(b.Records)-1), b.ProducerID, b.BaseSeq, 0, true)
}

// labKafka reports whether b goes in version 9: it has records, and its
// file form turns back into them exactly.
func labKafka(b Batch) bool {
	return len(b.Records) > 0 && recordsFromFile(&BatchHeader{ProducerID: b.ProducerID, BaseSeq: b.BaseSeq}, b.Records)
}

// kvAndMinTS returns the key and value bytes of recs and their least
// timestamp.
func kvAndMinTS(recs []Record) (kv, minTS int64) {
	minTS = recs[0].Timestamp
	for i := range recs {
		kv += int64(len(recs[i].Key) + len(recs[i].Value))
		minTS = min(minTS, recs[i].Timestamp)
	}
	return kv, minTS
}

// KafkaBatchOf returns the Kafka record batch inside a version 6 batch p
// (as a slice of p), or nil for a batch in another encoding.
func KafkaBatchOf(p []byte) []byte {
	if len(p) == 0 || p[0] != batchVersionKafka {
		return nil
	}
	_, raw, _, _, err := parseWire(p)
	if err != nil {
		return nil
	}
	return raw
}

// parseWire reads a version 6 or 9 batch's envelope and its Kafka header.
func parseWire(p []byte) (h BatchHeader, raw []byte, kvBytes, minTS int64, err error) {
	bad := func(format string, args ...any) (BatchHeader, []byte, int64, int64, error) {
		return BatchHeader{}, nil, 0, 0, corruptf("kafka batch", 0, format, args...)
	}
	q := p[1:]
	kv, n := binary.Uvarint(q)
	if n <= 0 || kv > 1<<40 {
		return bad("key and value bytes: truncated or overlong varint")
	}
	q = q[n:]
	if minTS, n = binary.Varint(q); n <= 0 {
		return bad("least timestamp: truncated or overlong varint")
	}
	raw = q[n:]
	if len(raw) < KafkaBatchHeaderLen {
		return bad("%d bytes, but a batch header takes %d", len(raw), KafkaBatchHeaderLen)
	}
	be := binary.BigEndian
	switch length := int64(int32(be.Uint32(raw[8:]))); {
	case raw[16] != 2:
		return bad("message format %d; this reads format 2", raw[16])
	case length != int64(len(raw)-12):
		return bad("it says it is %d bytes long, but %d follow", length, len(raw)-12)
	}
	attrs := int16(be.Uint16(raw[21:]))
	if attrs&(kafkaTransactional|kafkaControl) != 0 || attrs&kafkaCodecMask > 4 {
		return bad("attributes %#x: a transactional or control batch, or an unknown codec", attrs)
	}
	h.labIDs = p[0] == batchVersionLab
	if h.labIDs && attrs&kafkaCodecMask != 0 {
		return bad("attributes %#x: a batch of the lab's records is never compressed", attrs)
	}
	count := int64(int32(be.Uint32(raw[57:])))
	if count <= 0 || count > maxSegmentRecords {
		return bad("record count %d", count)
	}
	h.Count = int(count)
	if pid := int64(be.Uint64(raw[43:])); pid >= 0 {
		h.ProducerID, h.BaseSeq = EpochProducer(pid, int16(be.Uint16(raw[51:]))), int32(be.Uint32(raw[53:]))
	}
	first, maxMS := int64(be.Uint64(raw[27:])), int64(be.Uint64(raw[35:]))
	if !InNanos(first) || !InNanos(maxMS) {
		return bad("timestamps %d and %d ms: the log keeps nanoseconds, which reach only from 1677 to 2262", first, maxMS)
	}
	h.BaseTimestamp, h.MaxTimestamp = first*1e6, maxMS*1e6
	// Offsets as a producer writes them: 0, 1, 2, ... A batch the cleaner
	// left with gaps is read back in the compacted encoding instead.
	if last := int64(int32(be.Uint32(raw[23:]))); last != count-1 {
		return bad("last offset delta %d for %d records; want %d", last, count, count-1)
	}
	h.kafka = raw
	return h, raw, int64(kv), minTS, nil
}

// checkWire walks an uncompressed Kafka batch's records so a later read
// cannot fail: each record's framing fits and its offset delta is its
// place in the batch. A compressed batch was checked by whoever decompressed
// it before proposing it. exact reports whether the envelope's key+value
// bytes kv and least timestamp minTS are the records' own, so the batch
// turns back into these bytes from its file (see wireFromFile); a
// compressed batch never does.
func checkWire(h *BatchHeader, kv, minTS int64) (exact bool, err error) {
	raw := h.kafka
	if int16(binary.BigEndian.Uint16(raw[21:]))&kafkaCodecMask != 0 {
		return false, nil
	}
	first := int64(binary.BigEndian.Uint64(raw[27:]))
	gotKV, gotMin, gotMax := int64(0), int64(1<<63-1), int64(-1<<63)
	p := raw[KafkaBatchHeaderLen:]
	for i := range h.Count {
		r, rest, ok := readKafkaRecordNoHeaders(p)
		if !ok || r.offsetDelta != int64(i) {
			return false, corruptf("kafka batch", len(raw)-len(p), "record %d does not decode, or its offset delta is not %d", i, i)
		}
		ms, ok := RecordMillis(first, r.tsDelta)
		if !ok {
			return false, corruptf("kafka batch", len(raw)-len(p), "record %d's timestamp is past what nanoseconds reach (1677 to 2262)", i)
		}
		ts := ms * 1e6
		gotKV += int64(len(r.key) + len(r.value))
		gotMin, gotMax = min(gotMin, ts), max(gotMax, ts)
		p = rest
	}
	switch {
	case len(p) > 0:
		return false, corruptf("kafka batch", len(raw)-len(p), "%d bytes after the last record", len(p))
	case h.labIDs && gotMax != h.MaxTimestamp:
		// A leader writes the records' own; the time index trusts it.
		return false, corruptf("kafka batch", 0, "header says the max timestamp is %d, but the records' is %d", h.MaxTimestamp, gotMax)
	}
	return gotKV == kv && gotMin == minTS, nil
}

// InNanos reports whether ms milliseconds since 1970, as Kafka stamps a
// record, can be counted in int64 nanoseconds, as the log keeps them:
// from 1677 to 2262.
func InNanos(ms int64) bool {
	return ms >= math.MinInt64/int64(time.Millisecond) && ms <= math.MaxInt64/int64(time.Millisecond)
}

// RecordMillis is a Kafka record's timestamp, its batch's first plus its
// delta (milliseconds), and whether the log can keep it (InNanos, and the
// sum does not wrap). Two records may lie further apart than either lies
// from 1970.
func RecordMillis(first, delta int64) (int64, bool) {
	ms := first + delta
	if (delta > 0 && ms < first) || (delta < 0 && ms > first) {
		return 0, false
	}
	return ms, InNanos(ms)
}

// wireRecords returns the uncompressed records of a version 6 batch.
func wireRecords(raw []byte) ([]byte, bool) {
	recs := raw[KafkaBatchHeaderLen:]
	codec := int16(binary.BigEndian.Uint16(raw[21:])) & kafkaCodecMask
	if codec == 0 {
		return recs, true
	}
	d := decompressor.Load()
	if d == nil {
		return nil, false
	}
	out, err := (*d)(codec, recs)
	return out, err == nil
}

// decodeWire is decodeRecords for a version 6 or 9 batch: records from
// offset base+skip on, up to n; a client's (version 6) with MsgID empty
// (see Log.decodeData).
func decodeWire(h *BatchHeader, out []Record, base int64, skip, n int, epoch uint64) []Record {
	if h.labIDs {
		out, _ = decodeLabKafka(h.kafka[KafkaBatchHeaderLen:], h.Count, h.BaseTimestamp/1e6, base, epoch, true, out, skip, n)
		return out
	}
	recs, ok := wireRecords(h.kafka)
	if !ok {
		return out
	}
	first := h.BaseTimestamp / 1e6
	for i := 0; i < h.Count && n > 0; i++ {
		r, rest, ok := readKafkaRecord(recs)
		if !ok {
			break
		}
		recs = rest
		if r.offsetDelta < int64(skip) {
			continue
		}
		rec := Record{Offset: base + r.offsetDelta, Epoch: epoch, Timestamp: (first + r.tsDelta) * 1e6, Key: r.key, Value: r.value, Headers: r.headers}
		out = append(out, rec)
		n--
	}
	return out
}

// findWireTime is findTime for a version 6 batch.
func findWireTime(h *BatchHeader, t int64) (int64, bool) {
	for _, r := range decodeWire(h, nil, 0, 0, h.Count, 0) {
		if r.Timestamp >= t {
			return r.Offset, true
		}
	}
	return 0, false
}

// unkeyedWire is unkeyed for a version 6 batch.
func unkeyedWire(h *BatchHeader) int {
	for i, r := range decodeWire(h, nil, 0, 0, h.Count, 0) {
		if r.Key == nil {
			return i
		}
	}
	return -1
}

// appendWireToFile appends a version 6 batch's Kafka bytes to dst as its
// segment file holds them: the base offset and partition leader epoch
// set, every other byte as the client sent it.
func appendWireToFile(dst, raw []byte, base int64, epoch uint64) []byte {
	n := len(dst)
	dst = append(dst, raw...)
	binary.BigEndian.PutUint64(dst[n:], uint64(base))
	binary.BigEndian.PutUint32(dst[n+12:], uint32(int32(epoch)))
	return dst
}

// Decompressor undoes a Kafka compression codec (1 gzip, 2 snappy, 3
// lz4, 4 zstd) for the records of a batch a client sent compressed.
type Decompressor func(codec int16, data []byte) ([]byte, error)

var decompressor atomic.Pointer[Decompressor]

// SetDecompressor gives the package the codecs to read compressed Kafka
// batches with. The broker takes only the standard library; the Kafka
// listener, which brings the codecs, sets it.
func SetDecompressor(d Decompressor) { decompressor.Store(&d) }

// EpochProducer is the producer a partition knows a Kafka client's
// batches by. An idempotent client that cannot retry a batch bumps its
// producer epoch itself and starts its sequence numbers again at 0, which
// Kafka accepts. The log tracks producers by id alone, so each epoch of
// an id is a producer of its own there: the id with the epoch in its high
// bits (epoch 0 leaves the id as it is).
func EpochProducer(pid int64, epoch int16) int64 {
	if epoch <= 0 || pid >= 1<<47 {
		return pid
	}
	return pid | int64(epoch)<<47
}

// WireMsgID is the message id of a Kafka client's record with key and
// value in the partition named name: a hash of the three, so a retried
// copy of a record has the id of the first, and the id is known before
// the record has an offset (a produce whose answer was lost).
func WireMsgID(name string, key, value []byte) string {
	var h maphash.Hash
	h.SetSeed(idSeed)
	h.WriteString(name)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	h.Write(value)
	var id [64]byte
	b := append(id[:0], name...)
	b = append(b, '~')
	b = strconv.AppendUint(b, h.Sum64()&0xffffffffff, 36)
	return string(b)
}

// idSeed seeds WireMsgID's hash: ids need only agree within one process.
var idSeed = maphash.MakeSeed()

// errNoDecompressor is why a compressed batch cannot be read back.
var errNoDecompressor = errors.New("a compressed Kafka batch, and no decompressor set (SetDecompressor)")

// wireInfo computes the key+value bytes and least timestamp of a Kafka
// batch's records, for AppendWireBatch, decompressing when it must.
func wireInfo(raw []byte) (kvBytes, minTS int64, err error) {
	if len(raw) < KafkaBatchHeaderLen {
		return 0, 0, fmt.Errorf("%w: a batch of %d bytes", ErrCorrupt, len(raw))
	}
	recs, ok := wireRecords(raw)
	if !ok {
		return 0, 0, fmt.Errorf("%w: %v", ErrCorrupt, errNoDecompressor)
	}
	first := int64(binary.BigEndian.Uint64(raw[27:]))
	count := int32(binary.BigEndian.Uint32(raw[57:]))
	minTS = int64(1<<63 - 1)
	for i := int32(0); i < count; i++ {
		r, rest, ok := readKafkaRecord(recs)
		if !ok {
			return 0, 0, fmt.Errorf("%w: record %d of a batch does not decode", ErrCorrupt, i)
		}
		recs = rest
		kvBytes += int64(len(r.key) + len(r.value))
		minTS = min(minTS, (first+r.tsDelta)*1e6)
	}
	if count <= 0 {
		minTS = first * 1e6
	}
	return kvBytes, minTS, nil
}
