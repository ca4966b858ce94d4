package partlog

import (
	"os"
	"path/filepath"
)

// A FileRange is whole record batches of one segment file, as a fetch
// sends them: Len bytes of File from Pos, holding offsets First (the
// first batch's base offset) up to Next.
type FileRange struct {
	File        *os.File // opened for this range alone: its caller closes it
	Pos, Len    int64
	First, Next int64
}

// FileRange opens the segment file holding offset and returns the whole
// batches from the one holding offset on, as many as fit in maxBytes but
// at least one, within that segment, as Kafka answers a fetch. ok is false
// when the log writes no files (or they stopped) or offset is not a
// retained one: the caller reads records instead.
//
// The file is opened under the log's lock, so a compaction pass or a
// retention deletion that replaces or removes it afterwards leaves the
// range readable: the open file keeps the bytes the positions describe.
// Batches still waiting in memory are written out first.
func (l *Log) FileRange(offset int64, maxBytes int) (r FileRange, ok bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil || l.files.err != nil || len(l.segs) == 0 || offset < l.segs[0].base || offset >= l.end() {
		return FileRange{}, false, nil
	}
	seg := l.segs[l.segmentFor(offset)]
	j := seg.slot(offset)
	if j >= len(seg.batches) {
		return FileRange{}, false, nil
	}
	first := &seg.batches[j]
	r = FileRange{Pos: first.filePos, First: first.base, Next: first.base}
	for k := j; k < len(seg.batches); k++ {
		b := &seg.batches[k]
		if b.fileLen == 0 || b.filePos != r.Pos+r.Len {
			return FileRange{}, false, nil // not written as this log holds it: read records
		}
		if r.Len > 0 && r.Len+int64(b.fileLen) > int64(maxBytes) {
			break
		}
		r.Len += int64(b.fileLen)
		r.Next = b.next()
	}
	if f := seg.files; f != nil && r.Pos+r.Len > f.size-int64(len(f.pendingLog)) {
		l.files.flush(f)
		if l.files.err != nil {
			return FileRange{}, false, nil
		}
	}
	file, err := os.Open(filepath.Join(l.files.dir, SegmentFileName(seg.base, LogSuffix)))
	if err != nil {
		return FileRange{}, false, err
	}
	r.File = file
	return r, true, nil
}
