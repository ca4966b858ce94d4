package partlog

import "sort"

// indexEntry is one entry of a segment's sparse offset index. Kafka maps a
// relative offset to a byte position in the segment file; here the "file" is
// the records slice, so the position is a slot in it. Offsets are contiguous
// today, so pos == rel, but readers still go through the index and scan
// forward as Kafka does, which keeps working once offsets have gaps (for
// example after compaction).
type indexEntry struct {
	rel uint32 // offset - segment base
	pos uint32 // slot in segment.records
}

// segment is a run of consecutive records. Only the newest segment (the
// active one) is appended to; the others are closed and only ever deleted
// whole, by retention.
type segment struct {
	base    int64
	records []Record
	bytes   int64 // key+value bytes of records
	closed  bool

	minTS, maxTS int64
	maxTSRel     uint32 // first record that reached maxTS, relative to base

	// Sparse offset index, and the bytes appended since its last entry.
	index      []indexEntry
	sinceIndex int64

	// Sparse time index as two parallel slices (12 bytes an entry instead of
	// a padded 16-byte struct). Entry i says: up to offset base+timeRel[i],
	// the largest timestamp in this segment is timeTS[i], first reached at
	// that offset. Both columns strictly increase.
	timeTS  []int64
	timeRel []uint32
}

func newSegment(base int64, cfg Config) *segment {
	s := &segment{base: base}
	// When the segment's record count is known and small, size the slices
	// for it up front rather than growing them through repeated doubling
	// (with 16-record segments that is most of Append's allocations).
	// close trims whatever the indexes did not use.
	if n := cfg.SegmentRecords; n > 0 && n <= 4096 {
		s.reserve(n, n)
	}
	return s
}

// reserve sizes the slices for records records and up to entries index
// entries.
func (s *segment) reserve(records, entries int) {
	s.records = make([]Record, 0, records)
	s.index = make([]indexEntry, 0, entries)
	s.timeTS = make([]int64, 0, entries)
	s.timeRel = make([]uint32, 0, entries)
}

func (s *segment) next() int64 { return s.base + int64(len(s.records)) }

func recordBytes(r *Record) int64 { return int64(len(r.Key)) + int64(len(r.Value)) }

// full reports whether a record of size add must go to a new segment.
// Rolling happens lazily, when the next record arrives (as in Kafka), so the
// active segment is never empty except in a brand-new log.
func (s *segment) full(cfg *Config, add int64) bool {
	n := len(s.records)
	switch {
	case n == 0:
		return false
	case n >= maxSegmentRecords:
		return true
	case cfg.SegmentRecords > 0 && n >= cfg.SegmentRecords:
		return true
	case cfg.SegmentBytes > 0 && s.bytes+add > cfg.SegmentBytes:
		return true
	}
	return false
}

// add appends r (whose Offset must be s.next()) and maintains the indexes.
func (s *segment) add(r Record, interval int64) {
	rel := uint32(len(s.records))
	// Like Kafka, decide on an index entry before counting the new record:
	// once interval bytes have gone by, the record about to be written is
	// the next one to point at.
	if s.sinceIndex >= interval {
		s.index = append(s.index, indexEntry{rel: rel, pos: rel})
		s.indexTime()
		s.sinceIndex = 0
	}
	if len(s.records) == 0 {
		s.minTS, s.maxTS, s.maxTSRel = r.Timestamp, r.Timestamp, rel
	} else {
		s.minTS = min(s.minTS, r.Timestamp)
		// Strictly greater: the entry must point at the FIRST record with
		// the max timestamp, or a search for exactly that time would skip
		// an earlier record carrying it.
		if r.Timestamp > s.maxTS {
			s.maxTS, s.maxTSRel = r.Timestamp, rel
		}
	}
	s.records = append(s.records, r)
	b := recordBytes(&r)
	s.bytes += b
	s.sinceIndex += b
}

// indexTime adds a time index entry if the max timestamp has grown since the
// last one. Kafka indexes the max timestamp seen so far, not each record's,
// because producers' clocks disagree and a time index must be monotonic to
// be binary searched.
func (s *segment) indexTime() {
	if len(s.records) == 0 {
		return
	}
	if n := len(s.timeTS); n > 0 && s.maxTS <= s.timeTS[n-1] {
		return
	}
	s.timeTS = append(s.timeTS, s.maxTS)
	s.timeRel = append(s.timeRel, s.maxTSRel)
}

// close marks the segment read-only. Like Kafka on roll, it records the
// final max timestamp in the time index so lookups in closed segments start
// as late as possible, and it trims slack capacity since the slices will
// not grow again.
func (s *segment) close() {
	s.closed = true
	s.indexTime()
	s.records = trim(s.records)
	s.index = trim(s.index)
	s.timeTS = trim(s.timeTS)
	s.timeRel = trim(s.timeRel)
}

// trim copies s into an exactly sized slice when it wastes more than an
// eighth of its capacity.
func trim[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/8 {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// slot returns the position in s.records of the first record with Offset >=
// offset, the way Kafka reads a segment: binary search the sparse index for
// the last entry at or before the target, then scan forward from there.
func (s *segment) slot(offset int64) int {
	rel := offset - s.base
	i := sort.Search(len(s.index), func(i int) bool { return int64(s.index[i].rel) > rel })
	start := 0 // no entry at or before rel: the implicit entry (0, 0)
	if i > 0 {
		start = int(s.index[i-1].pos)
	}
	for j := start; j < len(s.records); j++ {
		if s.records[j].Offset >= offset {
			return j
		}
	}
	return len(s.records)
}

// findTime returns the offset of the first record with Timestamp >= t. The
// caller has checked s.maxTS >= t, so such a record exists here. The time
// index gives the last entry with a timestamp <= t: every record before that
// entry's offset is older than its timestamp, hence older than t, so the scan
// can start there.
func (s *segment) findTime(t int64) (int64, bool) {
	i := sort.Search(len(s.timeTS), func(i int) bool { return s.timeTS[i] > t })
	start := 0
	if i > 0 {
		start = int(s.timeRel[i-1])
	}
	for j := start; j < len(s.records); j++ {
		if s.records[j].Timestamp >= t {
			return s.records[j].Offset, true
		}
	}
	return 0, false
}

func (s *segment) info() SegmentInfo {
	return SegmentInfo{
		BaseOffset:       s.base,
		NextOffset:       s.next(),
		Records:          len(s.records),
		Bytes:            s.bytes,
		MinTimestamp:     s.minTS,
		MaxTimestamp:     s.maxTS,
		Closed:           s.closed,
		IndexEntries:     len(s.index),
		TimeIndexEntries: len(s.timeTS),
	}
}
