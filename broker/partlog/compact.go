package partlog

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Compaction, as Kafka's log cleaner does it for a topic with
// cleanup.policy=compact: a pass reads the closed segments (never the
// active one), keeps the newest record of every key and drops the older
// ones, drops tombstones (a null value) once they are older than
// DeleteRetention, and writes the survivors back into segments that keep
// their first base offset. Offsets never change: a batch keeps its base
// offset and its offset span, its records keep their offset deltas, and a
// reader sees gaps where records were. Consecutive cleaned segments are
// merged while the result fits in one segment's limits.
//
// Like EnforceRetention, Compact depends only on the log and its argument
// (the time of the command that asked for it), so every replica applying
// the same commands holds the same log.

// CompactResult says what one pass did.
type CompactResult struct {
	// From and To are the offsets the pass read: [From, To), the closed
	// segments.
	From, To       int64
	SegmentsBefore int // closed segments read
	SegmentsAfter  int // closed segments written
	RecordsBefore  int64
	RecordsAfter   int64
	Tombstones     int // tombstones removed for being older than DeleteRetention
}

// DirtyRatio is the share of the closed segments' key+value bytes
// appended since the last pass: what Kafka's min.cleanable.dirty.ratio is
// compared with. 0 when there is nothing closed.
func (l *Log) DirtyRatio() float64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var dirty, total int64
	for _, s := range l.segs[:max(len(l.segs)-1, 0)] {
		total += s.bytes
		if s.base >= l.cleanEnd {
			dirty += s.bytes
		}
	}
	if total == 0 {
		return 0
	}
	return float64(dirty) / float64(total)
}

// Compact runs one pass over the closed segments (see above) and says
// what it did; ok is false, and nothing changes, when the log is not
// compacted or has no closed segment. now is unix nanoseconds.
func (l *Log) Compact(now int64) (res CompactResult, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.cfg.Compact || len(l.segs) < 2 {
		return res, false
	}
	closed := l.segs[:len(l.segs)-1]
	res.From, res.To, res.SegmentsBefore = closed[0].base, closed[len(closed)-1].next(), len(closed)

	// The closed segments' bytes, some of which may be only in their
	// files: a pass that cannot read them all changes nothing.
	data, err := l.closedData(closed)
	if err != nil {
		return res, false
	}

	// The newest offset of every key in the closed segments: Kafka's
	// offset map, built over the part of the log the pass may clean.
	latest := make(map[string]int64)
	var recs []Record
	for si, s := range closed {
		for j := range s.batches {
			b := &s.batches[j]
			recs = l.decodeData(data[si][j], b, recs[:0], 0, int(b.count))
			for i := range recs {
				latest[string(recs[i].Key)] = recs[i].Offset
			}
			res.RecordsBefore += int64(len(recs))
		}
	}
	// A tombstone goes once its own timestamp is DeleteRetention old.
	horizon := int64(math.MinInt64)
	if age := int64(l.cfg.DeleteRetention); now >= math.MinInt64+age {
		horizon = now - age
	}

	var out []*segment
	var cur *segment
	interval := int64(l.cfg.IndexIntervalBytes)
	for si, s := range closed {
		// Merge into the segment being written while the survivors fit in
		// one segment; otherwise start a new one at this segment's base.
		if cur == nil || !l.fitsMerged(cur, s, data[si], latest, horizon) {
			if cur != nil {
				out = append(out, cur)
			}
			cur = newSegment(s.base)
		}
		for j := range s.batches {
			b := &s.batches[j]
			recs = l.decodeData(data[si][j], b, recs[:0], 0, int(b.count))
			kept := recs[:0]
			for _, r := range recs {
				switch {
				case latest[string(r.Key)] != r.Offset:
				case r.Value == nil && r.Timestamp < horizon:
					res.Tombstones++
				default:
					kept = append(kept, r)
				}
			}
			if len(kept) == 0 {
				continue // the whole batch goes; the next one's base shows the gap
			}
			ref := *b
			ref.data = data[si][j]
			if len(kept) < len(recs) {
				h, _, _ := parseHeader(ref.data)
				span := int32(b.next() - b.base)
				ref.data = encodeCompacted(kept, b.base, span, h.ProducerID, h.BaseSeq, kafkaRecords(ref.data))
				ref.count, ref.span = int32(len(kept)), span
			}
			info, err := parseBatch(ref.data)
			if err != nil {
				// Cannot happen (the batch was accepted, or was just
				// encoded); should it, the batch stays as it was.
				ref = *b
				ref.data = data[si][j]
				info, _ = parseBatch(ref.data)
				kept = recs
			}
			ref.maxTS = info.MaxTimestamp
			cur.add(ref, &info, interval)
			res.RecordsAfter += int64(len(kept))
		}
		cur.end = s.next()
	}
	out = append(out, cur)
	clear(recs)

	for _, s := range out {
		s.close()
	}
	l.files.replaceSegments(closed, out)
	for _, s := range out {
		l.evict(s)
	}
	for _, s := range closed {
		l.size -= s.bytes
	}
	for _, s := range out {
		l.size += s.bytes
	}
	segs := append(out, l.segs[len(l.segs)-1])
	clear(l.segs)
	l.segs = segs
	l.cleanEnd = res.To
	res.SegmentsAfter = len(out)
	return res, true
}

// fitsMerged reports whether the survivors of s fit in cur, a segment
// being written by a pass, within the segment limits.
func (l *Log) fitsMerged(cur, s *segment, data [][]byte, latest map[string]int64, horizon int64) bool {
	if len(cur.batches) == 0 {
		return true
	}
	var n, size int64
	var recs []Record
	for j := range s.batches {
		b := &s.batches[j]
		recs = l.decodeData(data[j], b, recs[:0], 0, int(b.count))
		for _, r := range recs {
			if latest[string(r.Key)] == r.Offset && (r.Value != nil || r.Timestamp >= horizon) {
				n++
				size += int64(len(r.Key) + len(r.Value))
			}
		}
	}
	cfg := &l.cfg
	switch {
	case s.next()-cur.base > maxSegmentRecords:
		return false
	case cfg.SegmentRecords > 0 && cur.records+n > int64(cfg.SegmentRecords):
		return false
	case cfg.SegmentBytes > 0 && cur.bytes+size > cfg.SegmentBytes:
		return false
	case cfg.SegmentAge > 0 && s.maxTS-cur.rollTS >= int64(cfg.SegmentAge):
		// Reading the files back rolls on age as appends do.
		return false
	}
	return true
}

// encodeCompacted encodes recs, the survivors of a batch written at base
// and spanning span offsets, in a compacted version of the batch encoding.
func encodeCompacted(recs []Record, base int64, span int32, pid int64, baseSeq int32, kafka bool) []byte {
	if kafka {
		// A client's records keep no id of the lab's: it is derived again
		// on reading.
		recs = slices.Clone(recs)
		for i := range recs {
			recs[i].MsgID = ""
		}
	}
	plain := AppendBatch(nil, Batch{ProducerID: pid, BaseSeq: baseSeq, Records: recs})
	var offs []byte
	for i := range recs {
		offs = binary.AppendUvarint(offs, uint64(recs[i].Offset-base))
	}
	version := byte(batchVersionCompacted)
	if plain[0] == batchVersionHeaders {
		version = batchVersionCompactedHeaders
	}
	if kafka {
		version += batchVersionCompactedKafka - batchVersionCompacted
	}
	out := make([]byte, 0, len(plain)+len(offs)+3*binary.MaxVarintLen64)
	out = append(out, version)
	out = binary.AppendVarint(out, base)
	out = binary.AppendUvarint(out, uint64(span))
	out = binary.AppendUvarint(out, uint64(len(offs)))
	out = append(out, offs...)
	return append(out, plain[1:]...)
}

// checkOffsets checks a compacted batch's offset deltas: count of them,
// strictly increasing, all within span.
func checkOffsets(p []byte, count int, span int64) error {
	prev := int64(-1)
	for i := range count {
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return fmt.Errorf("record %d: truncated or overlong varint", i)
		}
		p = p[n:]
		if int64(d) <= prev || d >= uint64(span) {
			return fmt.Errorf("record %d: delta %d after %d; deltas increase and stay below the span %d", i, d, prev, span)
		}
		prev = int64(d)
	}
	if len(p) > 0 {
		return fmt.Errorf("%d bytes after the last delta", len(p))
	}
	return nil
}

// unkeyed returns the position of the first record of an accepted batch
// without a key, or -1: a compacted topic refuses such a batch, as Kafka
// does, because compaction keeps records by key.
func unkeyed(p []byte) int {
	h, q, err := parseHeader(p)
	if err != nil {
		return -1
	}
	if h.kafka != nil {
		return unkeyedWire(&h)
	}
	r := reader{p: q}
	r.raw(int(r.uvarint()))
	if h.headers {
		r.raw(int(r.uvarint()))
	}
	for i := range h.Count {
		r.varint()
		if r.optBytes() == nil {
			return i
		}
		r.optBytes()
		r.uvarint()
	}
	return -1
}
