package partlog

import (
	"fmt"
	"sync"
)

// Log is the state of one partition: segments of record batches, oldest
// first, the last one active, plus idempotent producers' state.
//
// The zero Log is an empty log with the default Config.
type Log struct {
	mu        sync.RWMutex
	cfg       Config     // with defaults filled in
	segs      []*segment // never empty once initialised; the last is active
	size      int64      // sum of segs[i].bytes
	producers map[int64]*producer
	files     *logFiles    // nil unless attached to a folder (files.go)
	fileDir   string       // where evicted batches are read from (evict.go): the last folder attached
	cache     batchCache   // batches lately read back from their files
	fault     func() error // SetWriteFault's, asked before each file write
	cleanEnd  int64        // where the last compaction pass stopped (compact.go)
}

// New returns an empty log that will assign offsets from 0.
func New(cfg Config) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Log{}
	l.init(cfg)
	return l, nil
}

func (l *Log) init(cfg Config) {
	l.cfg = cfg.withDefaults()
	l.segs = []*segment{newSegment(0)}
	l.producers = make(map[int64]*producer)
}

// Config returns the log's configuration, with defaults filled in.
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.segs == nil {
		return Config{}.withDefaults()
	}
	return l.cfg
}

// Append encodes b (see EncodeBatch) and appends it as AppendEncoded does.
// The log keeps its own copy, so the caller may reuse b afterwards.
func (l *Log) Append(b Batch, epoch uint64) (AppendResult, error) {
	if len(b.Records) == 0 {
		return AppendResult{}, fmt.Errorf("%w: a batch needs at least one record, got none", ErrInvalidBatch)
	}
	return l.AppendEncoded(EncodeBatch(b), epoch)
}

// AppendEncoded appends an encoded batch (EncodeBatch's format, the bytes
// of a raft entry) whole: its records get contiguous offsets from
// EndOffset and all carry epoch. If the active segment is not empty and the
// batch would take it past a segment limit, a new segment starts with it.
//
// It reads the batch's header and walks its records' framing (no decoding,
// no allocation), so a damaged batch is an error wrapping ErrCorrupt here
// rather than a failure on some later read; records are decoded only when
// read. An empty batch is ErrInvalidBatch.
//
// For an idempotent producer (ProducerID != 0) the batch must continue the
// producer's sequence: a repeat of one of its last five batches is answered
// with the original result and Duplicate set (nothing is appended); a gap
// is ErrOutOfOrderSequence; reused sequence numbers that are not a cached
// batch are ErrDuplicateSequence. A producer the log has not seen must start
// at sequence 0.
//
// The log keeps data itself, not a copy (records read later point into it),
// so nobody may modify data afterwards. A raft entry's Data qualifies: raft
// never changes an entry once it is stored.
func (l *Log) AppendEncoded(data []byte, epoch uint64) (AppendResult, error) {
	info, err := parseBatch(data)
	if err != nil {
		return AppendResult{}, err
	}
	switch {
	case info.Count == 0:
		return AppendResult{}, fmt.Errorf("%w: a batch needs at least one record, got none", ErrInvalidBatch)
	case info.compacted():
		return AppendResult{}, fmt.Errorf("%w: a compacted batch cannot be produced; only the cleaner writes one", ErrInvalidBatch)
	case info.Count > maxSegmentRecords:
		return AppendResult{}, fmt.Errorf("%w: %d records in one batch; a batch holds at most %d", ErrInvalidBatch, info.Count, int64(maxSegmentRecords))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.segs == nil {
		l.init(Config{})
	}
	if l.cfg.Compact {
		if i := unkeyed(data); i >= 0 {
			return AppendResult{}, fmt.Errorf("%w: record %d of the batch has no key; a compacted topic keeps the newest record of each key, so every record needs one", ErrNoKey, i)
		}
	}

	if info.ProducerID != 0 {
		orig, err := l.checkSequence(info.ProducerID, info.BaseSeq, info.Count)
		if err != nil {
			return AppendResult{}, err
		}
		if orig != nil {
			return AppendResult{BaseOffset: orig.baseOffset, Count: orig.count(), Duplicate: true}, nil
		}
	}

	base := l.end()
	l.add(batchRef{data: data[:len(data):len(data)], base: base, maxTS: info.MaxTimestamp, epoch: epoch, count: int32(info.Count), fromFile: info.wireExact}, &info)
	if info.ProducerID != 0 {
		l.remember(info.ProducerID, info.BaseSeq, info.Count, base)
	}
	return AppendResult{BaseOffset: base, Count: info.Count}, nil
}

// add puts b at the end of the log, rolling the active segment first if b
// does not fit in it.
func (l *Log) add(b batchRef, info *batchInfo) {
	active := l.segs[len(l.segs)-1]
	if active.full(&l.cfg, info.Count, info.bytes, info.MaxTimestamp) {
		active.close()
		l.files.closeSegment(active)
		l.evict(active)
		active = newSegment(b.base)
		l.segs = append(l.segs, active)
		l.files.open(active)
	}
	active.add(b, info, int64(l.cfg.IndexIntervalBytes))
	l.size += info.bytes
	l.files.append(active, &active.batches[len(active.batches)-1])
}

// StartOffset is the offset of the oldest retained record (or EndOffset
// when the log is empty).
func (l *Log) StartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.segs) == 0 {
		return 0
	}
	return l.segs[0].base
}

// EndOffset is the offset the next appended record will get.
func (l *Log) EndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.end()
}

func (l *Log) end() int64 {
	if len(l.segs) == 0 {
		return 0
	}
	return l.segs[len(l.segs)-1].next()
}

// Size is the key+value bytes of the retained records.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.size
}

// Segments describes the segments, oldest first; the last is the active one.
func (l *Log) Segments() []SegmentInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = s.info()
	}
	return out
}
