package partlog

import "math"

// EnforceRetention deletes whole closed segments, oldest first, that are too
// old or that the size limit does not need, and returns what it deleted.
// The active segment is never deleted. now is unix nanoseconds; it is an
// argument (not the clock) so that every replica applying the same command
// deletes the same segments.
//
// Deletion only ever removes a prefix of the log, because the log start
// offset is simply the base offset of the first remaining segment: a segment
// that must stay protects every newer one.
func (l *Log) EnforceRetention(now int64) []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.segs) == 0 {
		return nil
	}
	closed := len(l.segs) - 1 // segs[:closed] are closed
	n := 0                    // segments to delete

	// By age: Kafka's rule, the segment's newest record is older than
	// now-age. The cutoff is computed without overflow; if now-age does not
	// fit in an int64, nothing can be that old.
	if age := int64(l.cfg.RetentionAge); age > 0 && now >= math.MinInt64+age {
		cutoff := now - age
		for n < closed && l.segs[n].maxTS < cutoff {
			n++
		}
	}

	// By size: delete while what remains without the segment is still at
	// least RetentionBytes, so retention never takes the log below the limit.
	if limit := l.cfg.RetentionBytes; limit > 0 {
		remaining := l.size
		for i := range n {
			remaining -= l.segs[i].bytes
		}
		for n < closed && remaining-l.segs[n].bytes >= limit {
			remaining -= l.segs[n].bytes
			n++
		}
	}

	if n == 0 {
		return nil
	}
	deleted := make([]SegmentInfo, n)
	for i, s := range l.segs[:n] {
		deleted[i] = s.info()
		l.size -= s.bytes
		l.files.remove(s)
	}
	// Shift down and clear the tail so the deleted segments (and the record
	// bytes they hold) can be garbage collected.
	k := copy(l.segs, l.segs[n:])
	clear(l.segs[k:])
	l.segs = l.segs[:k]
	return deleted
}
