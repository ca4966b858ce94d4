package partlog

import (
	"sort"
	"unsafe"
)

// batchRef is one stored record batch: the bytes it arrived in (the raft
// entry's, never copied and never modified) and what reads need to find a
// record without decoding any: where its offsets start, how many records it
// has, its epoch and its largest timestamp.
type batchRef struct {
	data  []byte // the encoded batch (see codec.go), capped at its length
	base  int64  // offset of its first record
	maxTS int64
	epoch uint64
	count int32 // records it holds
	// span is the offsets the batch covers when compaction has dropped
	// some of its records (its last offset delta + 1, as written); 0 for a
	// batch as written, which covers exactly count offsets.
	span int32
	// Where the batch is in its segment's .log file, once written there
	// (files.go): its first byte and its length.
	filePos int64
	fileLen int32
	// dataLen is len(data) as appended; it stays when a closed segment
	// lets data go (evict.go), and kind is data[0], its encoding version.
	dataLen int32
	kind    byte
	// fromFile: the batch's bytes in its .log file turn back into data
	// exactly (dataFromFile), so a closed segment may let data go.
	fromFile bool
}

func (b *batchRef) next() int64 {
	if b.span > 0 {
		return b.base + int64(b.span)
	}
	return b.base + int64(b.count)
}

// indexEntry is one entry of a segment's sparse offset index. Kafka maps a
// relative offset to a byte position in the segment file, where a record
// batch starts; here the "file" is the batches slice, so the position is a
// batch's slot in it. Readers binary search the index for the last entry at
// or before the offset they want, then scan batches forward from its slot,
// as Kafka does.
type indexEntry struct {
	rel uint32 // offset of the batch's first record - segment base
	pos uint32 // slot in segment.batches
}

// segment is a run of consecutive record batches. Only the newest segment
// (the active one) is appended to; the others are closed and only ever
// deleted whole, by retention. Like Kafka, a batch never spans segments.
type segment struct {
	base    int64
	end     int64 // one past its last offset: base + records until compaction leaves gaps
	batches []batchRef
	records int64 // records in all batches
	bytes   int64 // key+value bytes of the records
	closed  bool
	files   *segmentFiles // open while the segment is active in a log with a folder

	minTS, maxTS int64
	maxTSSlot    uint32 // first batch that reached maxTS
	rollTS       int64  // the first batch's largest timestamp, where SegmentAge counts from

	// Sparse offset index, and the bytes appended since its last entry.
	index      []indexEntry
	sinceIndex int64

	// Sparse time index as two parallel slices (12 bytes an entry instead of
	// a padded 16-byte struct). Entry i says: up to batch timeSlot[i], the
	// largest timestamp in this segment is timeTS[i], first reached in that
	// batch. Both columns strictly increase.
	timeTS   []int64
	timeSlot []uint32

	// Where the time index starts out: most segments close with one entry
	// in it, which then costs no allocation of its own.
	firstTS   [1]int64
	firstSlot [1]uint32
}

// newSegment is cheap: a segment of one batch (the usual case with the
// default 16-record segments and batching producers) costs the struct and
// a one-element batches slice; the indexes grow only when they get entries
// beyond the first time index entry, which the struct holds.
func newSegment(base int64) *segment {
	s := &segment{base: base, end: base}
	s.timeTS, s.timeSlot = s.firstTS[:0], s.firstSlot[:0]
	return s
}

func (s *segment) next() int64 { return s.end }

// full reports whether a batch of count records and size key+value bytes
// must go to a new segment. Rolling happens lazily, when the next batch
// arrives (as in Kafka), so the active segment is never empty except in a
// brand-new log; a batch larger than a limit gets a segment to itself.
func (s *segment) full(cfg *Config, count int, size, maxTS int64) bool {
	n := s.records
	switch {
	case n == 0:
		return false
	case cfg.SegmentAge > 0 && maxTS-s.rollTS >= int64(cfg.SegmentAge):
		return true
	case n+int64(count) > maxSegmentRecords:
		return true
	case cfg.SegmentRecords > 0 && n+int64(count) > int64(cfg.SegmentRecords):
		return true
	case cfg.SegmentBytes > 0 && s.bytes+size > cfg.SegmentBytes:
		return true
	}
	return false
}

// add appends b (whose base must be s.next()) and maintains the indexes;
// info is what parseBatch found in it.
func (s *segment) add(b batchRef, info *batchInfo, interval int64) {
	slot := uint32(len(s.batches))
	// Like Kafka, decide on an index entry before counting the new batch:
	// once interval bytes have gone by, the batch about to be written is the
	// next one to point at.
	if s.sinceIndex >= interval {
		s.index = append(s.index, indexEntry{rel: uint32(b.base - s.base), pos: slot})
		s.indexTime()
		s.sinceIndex = 0
	}
	if len(s.batches) == 0 {
		s.minTS, s.maxTS, s.maxTSSlot, s.rollTS = info.minTS, b.maxTS, slot, b.maxTS
	} else {
		s.minTS = min(s.minTS, info.minTS)
		// Strictly greater: the entry must point at the FIRST batch with the
		// max timestamp, or a search for exactly that time would skip an
		// earlier record carrying it.
		if b.maxTS > s.maxTS {
			s.maxTS, s.maxTSSlot = b.maxTS, slot
		}
	}
	if b.data != nil {
		b.dataLen, b.kind = int32(len(b.data)), b.data[0]
	}
	s.batches = append(s.batches, b)
	s.records += int64(b.count)
	s.end = b.next()
	s.bytes += info.bytes
	s.sinceIndex += info.bytes
}

// indexTime adds a time index entry if the max timestamp has grown since the
// last one. Kafka indexes the max timestamp seen so far, not each batch's,
// because producers' clocks disagree and a time index must be monotonic to
// be binary searched.
func (s *segment) indexTime() {
	if len(s.batches) == 0 {
		return
	}
	if n := len(s.timeTS); n > 0 && s.maxTS <= s.timeTS[n-1] {
		return
	}
	s.timeTS = append(s.timeTS, s.maxTS)
	s.timeSlot = append(s.timeSlot, s.maxTSSlot)
}

// close marks the segment read-only. Like Kafka on roll, it records the
// final max timestamp in the time index so lookups in closed segments start
// as late as possible, and it trims slack capacity since the slices will
// not grow again.
func (s *segment) close() {
	s.closed = true
	s.indexTime()
	s.batches = trim(s.batches)
	s.index = trim(s.index)
	s.timeTS = trim(s.timeTS)
	s.timeSlot = trim(s.timeSlot)
}

// trim copies s into an exactly sized slice when it wastes more than an
// eighth of its capacity and at least minTrimBytes. Below that the copy
// would land in an allocation size class no smaller than the original: a
// segment's one-entry time index (a uint32 slice of capacity 2, say) would
// be copied on every close and save nothing.
func trim[T any](s []T) []T {
	var zero T
	if waste := cap(s) - len(s); waste <= len(s)/8 || waste*int(unsafe.Sizeof(zero)) < minTrimBytes {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

const minTrimBytes = 64

// slot returns the slot of the batch holding offset (len(s.batches) if it
// is beyond the segment), the way Kafka reads a segment: binary search the
// sparse index for the last entry at or before the target, then scan
// forward from there.
func (s *segment) slot(offset int64) int {
	rel := offset - s.base
	i := sort.Search(len(s.index), func(i int) bool { return int64(s.index[i].rel) > rel })
	start := 0 // no entry at or before rel: the implicit entry (0, 0)
	if i > 0 {
		start = int(s.index[i-1].pos)
	}
	for j := start; j < len(s.batches); j++ {
		if offset < s.batches[j].next() {
			return j
		}
	}
	return len(s.batches)
}

// findTime returns the offset of the first record with Timestamp >= t. The
// caller has checked s.maxTS >= t, so such a record exists here. The time
// index gives the last entry with a timestamp <= t: every batch before that
// entry's slot is older than its timestamp, hence older than t, so the scan
// can start there. Only the batch holding the answer is walked record by
// record; the others are passed over on their max timestamps.
func (l *Log) findTime(s *segment, t int64) (int64, bool) {
	i := sort.Search(len(s.timeTS), func(i int) bool { return s.timeTS[i] > t })
	start := 0
	if i > 0 {
		start = int(s.timeSlot[i-1])
	}
	for j := start; j < len(s.batches); j++ {
		b := &s.batches[j]
		if b.maxTS < t {
			continue
		}
		data, err := l.batchData(s, b)
		if err != nil {
			continue // its file cannot be read: the answer is a later batch, as if this one had no such record
		}
		if k, ok := findTime(data, t); ok {
			return b.base + k, true
		}
	}
	return 0, false
}

func (s *segment) info() SegmentInfo {
	return SegmentInfo{
		BaseOffset:       s.base,
		NextOffset:       s.next(),
		Records:          int(s.records),
		Batches:          len(s.batches),
		Bytes:            s.bytes,
		MinTimestamp:     s.minTS,
		MaxTimestamp:     s.maxTS,
		Closed:           s.closed,
		IndexEntries:     len(s.index),
		TimeIndexEntries: len(s.timeTS),
	}
}
