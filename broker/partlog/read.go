package partlog

import (
	"fmt"
	"sort"
)

// Read returns up to maxRecords records (<= 0 means 1) starting at offset.
// Reading at EndOffset returns no records and no error: the consumer is
// caught up. An offset below StartOffset (deleted by retention) or beyond
// EndOffset is an error wrapping ErrOffsetOutOfRange that names the valid
// range.
//
// Records are decoded from the stored batches on each call, so the slice is
// the caller's; their Key and Value bytes are shared with the log: treat
// them as read-only.
func (l *Log) Read(offset int64, maxRecords int) ([]Record, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	start, end := int64(0), l.end()
	if len(l.segs) > 0 {
		start = l.segs[0].base
	}
	switch {
	case offset < start:
		return nil, fmt.Errorf("%w: offset %d is below the log start %d (older records were deleted by retention); valid offsets are [%d, %d]",
			ErrOffsetOutOfRange, offset, start, start, end)
	case offset > end:
		return nil, fmt.Errorf("%w: offset %d is beyond the log end %d (not written yet); valid offsets are [%d, %d]",
			ErrOffsetOutOfRange, offset, end, start, end)
	case offset == end:
		return nil, nil
	}
	return l.collect(offset, max(maxRecords, 1))
}

// Window returns up to n retained records from `from`, clamped into the
// retained range. It is for display, so it never fails: out-of-range
// requests just return what there is.
func (l *Log) Window(from int64, n int) []Record {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if n <= 0 || len(l.segs) == 0 {
		return nil
	}
	from = max(from, l.segs[0].base)
	if from >= l.end() {
		return nil
	}
	recs, _ := l.collect(from, n)
	return recs
}

// collect decodes up to n records from offset, which must be retained. It
// finds the segment by binary search on base offsets, the batch inside it
// through the segment's sparse index, then decodes batches, and only those,
// walking forward across segments.
//
// A batch a closed segment keeps only in its file is read from there; if
// that fails, the records before it are returned with the error.
func (l *Log) collect(offset int64, n int) ([]Record, error) {
	out := make([]Record, 0, min(int64(n), l.end()-offset))
	si := l.segmentFor(offset)
	j := l.segs[si].slot(offset)
	for ; si < len(l.segs) && len(out) < n; si++ {
		seg := l.segs[si]
		for ; j < len(seg.batches) && len(out) < n; j++ {
			b := &seg.batches[j]
			skip := int(max(offset-b.base, 0))
			var err error
			if out, err = l.decode(seg, b, out, skip, n-len(out)); err != nil {
				return out, err
			}
		}
		j = 0
	}
	return out, nil
}

// segmentFor returns the index of the segment holding offset: the last one
// whose base is <= offset.
func (l *Log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	return max(i-1, 0)
}

// OffsetForTime returns the offset of the first record whose Timestamp is
// >= t. ok is false when no retained record is that new; offset is then
// EndOffset, which is what Kafka answers.
//
// Timestamps come from producers' clocks and need not grow with offsets.
// Like Kafka, the search takes the first segment whose max timestamp reaches
// t (every earlier segment is entirely older than t), then uses that
// segment's time index and scans its batches forward, on their max
// timestamps; only the batch holding the answer is decoded.
func (l *Log) OffsetForTime(t int64) (offset int64, ok bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.segs {
		if s.records > 0 && s.maxTS >= t {
			if off, found := l.findTime(s, t); found {
				return off, true
			}
		}
	}
	return l.end(), false
}

// WireMsgID is the message id of r, a record of a Kafka client's batch
// (which carries none), in this log: "" when the log has no Name.
func (l *Log) WireMsgID(r Record) string {
	l.mu.RLock()
	name := l.cfg.Name
	l.mu.RUnlock()
	if name == "" {
		return ""
	}
	return WireMsgID(name, r.Key, r.Value)
}

// decode is decodeRecords for batch b of segment seg, with the message
// ids a Kafka client's records get in a log with a Name.
func (l *Log) decode(seg *segment, b *batchRef, out []Record, skip, n int) ([]Record, error) {
	if b.data == nil && (b.kind == batchVersion || b.kind == batchVersionHeaders || b.kind == batchVersionLab) {
		// The lab's records, read straight from their file.
		raw, kb, err := l.rawBatch(seg, b)
		if err != nil {
			return out, err
		}
		if got, ok := decodeLabFromFile(raw, kb, b, out, skip, n); ok {
			return got, nil
		}
	}
	data, err := l.batchData(seg, b)
	if err != nil {
		return out, err
	}
	return l.decodeData(data, b, out, skip, n), nil
}

// decodeData is decode for b's bytes, data.
func (l *Log) decodeData(data []byte, b *batchRef, out []Record, skip, n int) []Record {
	from := len(out)
	out = decodeRecords(data, out, b.base, skip, n, b.epoch)
	if l.cfg.Name != "" && kafkaRecords(data) {
		for i := from; i < len(out); i++ {
			out[i].MsgID = WireMsgID(l.cfg.Name, out[i].Key, out[i].Value)
		}
	}
	return out
}
