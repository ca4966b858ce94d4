package partlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// A log attached to a folder (AttachDir) writes every segment there as
// Kafka lays a partition out on disk: per segment, named by its base
// offset in twenty digits,
//
//	00000000000000000000.log        record batches, format 2 (kafkabatch.go)
//	00000000000000000000.index      8-byte entries: int32 offset - base, int32 byte position in .log
//	00000000000000000000.timeindex  12-byte entries: int64 timestamp (ms), int32 offset - base
//
// all big endian. A segment's .index and .timeindex are created with their
// first entry (Kafka creates all three at once): on a disk where creating
// a file costs a quarter of a millisecond, a segment of one batch, which
// never gets an offset index entry, then costs two files, not three. The
// files follow the log: a batch appended is a batch
// written, a roll closes one set of files and opens the next, retention
// removes a segment's files. As in Kafka, an index entry is added after a
// batch once more than the index interval of .log bytes has gone by since
// the last entry; it points at that batch (its last offset, the byte where
// it starts), and the time index gets the largest timestamp so far with
// the last offset of the batch that reached it, if it has grown. A closing
// segment gets a last time index entry for its largest timestamp.
//
// The folder holds what the log holds: attaching rewrites it from the log,
// and a failed write stops the files (FilesErr says why) while the log goes
// on, so replicas never disagree because one of them had a disk problem.

// Suffixes of a segment's files.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
)

// IndexEntrySize and TimeIndexEntrySize are the bytes of one entry of a
// segment's .index and .timeindex.
const (
	IndexEntrySize     = 8
	TimeIndexEntrySize = 12
)

// SegmentFileName is the name of the segment file with base offset base
// and suffix (LogSuffix, IndexSuffix or TimeIndexSuffix).
func SegmentFileName(base int64, suffix string) string {
	return fmt.Sprintf("%020d%s", base, suffix)
}

// logFiles is the folder a log writes its segments to.
type logFiles struct {
	dir      string
	interval int64
	err      error        // the first failure; nothing is written after it
	recs     []Record     // a batch's records, reused
	spare    []byte       // a closed segment's pending buffer, for the next one
	ckpt     checkpoint   // written to CheckpointFile on detach
	fault    func() error // nil, or asked before each write (SetWriteFault)
}

// segmentFiles are the open files of the active segment and what adding
// index entries to them needs.
type segmentFiles struct {
	base                  int64
	log, index, timeindex *os.File // index and timeindex nil until their first entry
	// Bytes not yet handed to the files: the .log's up to pendingMax, and
	// the index entries, which Kafka keeps in memory-mapped files and this
	// package keeps here until the segment closes or the log is synced.
	pendingLog, pendingIndex, pendingTime []byte
	size                                  int64 // bytes in .log
	sinceIndex                            int64 // .log bytes since the last .index entry
	maxTS                                 int64 // ms, the largest timestamp so far
	maxTSRel                              int64 // offset - base of the last record of the batch that reached it
	lastTI                                int64 // the timestamp of the last .timeindex entry
}

// AttachDir makes the log write its segments as files in dir (see
// files.go), replacing whatever dir held: the retained segments are
// written out at once, and every later append, roll and deletion follows.
// A log attached to another folder is detached from it first.
func (l *Log) AttachDir(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.segs == nil {
		l.init(Config{})
	}
	l.detachLocked()
	// Batches kept only in files come back into memory first: the folder
	// may be the one they are in, and is emptied below.
	if err := l.loadEvicted(); err != nil {
		return fmt.Errorf("log folder %s: %w", dir, err)
	}
	materializePins(dir, true)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("log folder %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("log folder %s: %w", dir, err)
	}
	lf := &logFiles{dir: dir, interval: int64(l.cfg.IndexIntervalBytes), fault: l.fault}
	for i, s := range l.segs {
		lf.open(s)
		for j := range s.batches {
			lf.append(s, &s.batches[j])
		}
		if i < len(l.segs)-1 {
			lf.closeSegment(s)
		}
	}
	if lf.err != nil {
		lf.closeSegment(l.segs[len(l.segs)-1])
		return lf.err
	}
	l.files, l.fileDir = lf, dir
	l.cache.reset()
	for _, s := range l.segs[:len(l.segs)-1] {
		l.evict(s)
	}
	return nil
}

// DetachDir closes the log's files, writing its checkpoint (see
// NoteApplied); the folder keeps what was written.
func (l *Log) DetachDir() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.detachLocked()
}

func (l *Log) detachLocked() {
	if l.files == nil {
		return
	}
	for _, s := range l.segs {
		if s.files != nil {
			l.files.flush(s.files)
			closeFiles(s.files)
			s.files = nil
		}
	}
	l.files.writeCheckpoint()
	l.files = nil
	l.cache.reset() // its open file
}

// Dir is the folder the log writes to, "" when it has none.
func (l *Log) Dir() string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.files == nil {
		return ""
	}
	return l.files.dir
}

// FilesErr is the error that stopped the log's files, nil while they are
// written.
func (l *Log) FilesErr() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.files == nil {
		return nil
	}
	return l.files.err
}

// SetWriteFault makes the log ask fault before every write to its files,
// now and after a later AttachDir; a non-nil answer is taken as the
// write's error (a full disk answers syscall.ENOSPC), which stops the
// files as a real failure does. It is how the broker's tests and the
// lab's faults give one replica a failing disk; nil removes the hook, but
// files already stopped stay stopped.
func (l *Log) SetWriteFault(fault func() error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fault = fault
	if l.files != nil {
		l.files.fault = fault
	}
}

// faulted reports an injected write error, failing the files with it.
func (lf *logFiles) faulted() bool {
	if lf.fault == nil {
		return false
	}
	if err := lf.fault(); err != nil {
		lf.fail(err)
		return true
	}
	return false
}

func (lf *logFiles) fail(err error) {
	if lf.err == nil {
		lf.err = fmt.Errorf("log folder %s: %w", lf.dir, err)
	}
}

// open creates the files of segment s, which must be new or empty on disk.
func (lf *logFiles) open(s *segment) {
	if lf == nil || lf.err != nil {
		return
	}
	f := &segmentFiles{base: s.base, maxTS: math.MinInt64, lastTI: math.MinInt64, pendingLog: lf.spare[:0]}
	lf.spare = nil
	if f.log = lf.create(s.base, LogSuffix); f.log != nil {
		s.files = f
	}
}

// create makes a new, empty segment file; nil after a failure.
func (lf *logFiles) create(base int64, suffix string) *os.File {
	if lf.faulted() {
		return nil
	}
	file, err := os.OpenFile(filepath.Join(lf.dir, SegmentFileName(base, suffix)), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		lf.fail(err)
		return nil
	}
	return file
}

// append writes stored batch b, just added to s, to s's files.
func (lf *logFiles) append(s *segment, b *batchRef) {
	if lf == nil || lf.err != nil {
		return
	}
	f := s.files
	if f == nil {
		lf.fail(errors.New("a segment without open files was appended to"))
		return
	}
	h, _, err := parseHeader(b.data)
	if err != nil {
		lf.fail(err)
		return
	}
	n := len(f.pendingLog)
	if h.kafka != nil {
		// A Kafka client's batch goes to the file as it arrived.
		// Whether it comes back from the file exactly is known when the
		// append's check found it; a batch attached later is walked again.
		f.pendingLog = appendWireToFile(f.pendingLog, h.kafka, b.base, b.epoch)
		if !b.fromFile {
			b.fromFile = wireFromFile(b.data, h.kafka)
		}
	} else {
		lf.recs = decodeRecords(b.data, lf.recs[:0], b.base, 0, int(b.count), b.epoch)
		f.pendingLog = appendKafkaBatch(f.pendingLog, lf.recs, b.base, b.next()-1, h.ProducerID, h.BaseSeq, b.epoch, false)
		b.fromFile = recordsFromFile(&h, lf.recs)
		clear(lf.recs) // drop the references into b.data
	}
	size := int64(len(f.pendingLog) - n)
	pos := f.size
	f.size += size
	b.filePos, b.fileLen = pos, int32(size)
	lf.track(f, b.next()-1-s.base, b.maxTS/1e6, pos, size)
	if len(f.pendingLog) >= pendingMax {
		lf.flush(f)
	}
}

// pendingMax is how much of a segment's .log waits in memory before it
// is written: batches are written several at a time, in one system call.
const pendingMax = 64 << 10

// flush writes what f holds back, creating an index file with its first
// entry.
func (lf *logFiles) flush(f *segmentFiles) {
	if lf == nil || lf.err != nil {
		return
	}
	write := func(file **os.File, suffix string, p *[]byte) {
		if len(*p) == 0 || lf.err != nil {
			return
		}
		if *file == nil {
			if *file = lf.create(f.base, suffix); *file == nil {
				return
			}
		}
		if lf.faulted() {
			return
		}
		if _, err := (*file).Write(*p); err != nil {
			lf.fail(err)
		}
		*p = (*p)[:0]
	}
	write(&f.log, LogSuffix, &f.pendingLog)
	write(&f.index, IndexSuffix, &f.pendingIndex)
	write(&f.timeindex, TimeIndexSuffix, &f.pendingTime)
}

// SyncFiles writes everything the log holds back to its files, so that
// reading them now sees every batch and index entry.
func (l *Log) SyncFiles() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		return nil
	}
	if n := len(l.segs); n > 0 && l.segs[n-1].files != nil {
		l.files.flush(l.segs[n-1].files)
	}
	return l.files.err
}

// track does the index keeping for a batch whose last offset is last
// (relative to the segment's base) and whose largest timestamp is ts
// (milliseconds), written at byte pos of the segment's .log and size
// bytes long: an offset index entry pointing at it and a time index entry
// once more than the interval has gone by.
func (lf *logFiles) track(f *segmentFiles, last, ts, pos, size int64) {
	if ts > f.maxTS {
		f.maxTS, f.maxTSRel = ts, last
	}
	if f.sinceIndex > lf.interval {
		f.pendingIndex = binary.BigEndian.AppendUint32(f.pendingIndex, uint32(last))
		f.pendingIndex = binary.BigEndian.AppendUint32(f.pendingIndex, uint32(pos))
		lf.timeEntry(f)
		f.sinceIndex = 0
	}
	f.sinceIndex += size
}

// timeEntry adds a time index entry if the largest timestamp has grown
// since the last one: a time index only ever grows, so it can be searched.
func (lf *logFiles) timeEntry(f *segmentFiles) {
	if f.maxTS <= f.lastTI {
		return
	}
	f.pendingTime = binary.BigEndian.AppendUint64(f.pendingTime, uint64(f.maxTS))
	f.pendingTime = binary.BigEndian.AppendUint32(f.pendingTime, uint32(f.maxTSRel))
	f.lastTI = f.maxTS
}

// closeSegment closes s's files as a roll does: its time index gets its
// largest timestamp first.
func (lf *logFiles) closeSegment(s *segment) {
	if s.files == nil {
		return
	}
	if lf != nil && lf.err == nil {
		lf.timeEntry(s.files)
		lf.flush(s.files)
		lf.spare = s.files.pendingLog[:0]
	}
	closeFiles(s.files)
	s.files = nil
}

// remove deletes the files of s, a segment retention dropped.
func (lf *logFiles) remove(s *segment) {
	if lf == nil || lf.err != nil {
		return
	}
	materializePins(filepath.Join(lf.dir, SegmentFileName(s.base, LogSuffix)), false)
	for _, suffix := range [...]string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		if err := os.Remove(filepath.Join(lf.dir, SegmentFileName(s.base, suffix))); err != nil && !errors.Is(err, os.ErrNotExist) {
			lf.fail(err)
		}
	}
}

// replaceSegments writes the segments a compaction pass made, in place
// of the closed segments it read: the old files go, the new ones are
// written whole and closed.
func (lf *logFiles) replaceSegments(old, made []*segment) {
	if lf == nil || lf.err != nil {
		return
	}
	for _, s := range old {
		lf.remove(s)
	}
	for _, s := range made {
		lf.open(s)
		for j := range s.batches {
			lf.append(s, &s.batches[j])
		}
		lf.closeSegment(s)
	}
}

func closeFiles(f *segmentFiles) {
	for _, file := range [...]*os.File{f.log, f.index, f.timeindex} {
		if file != nil {
			file.Close()
		}
	}
}
