package partlog

import (
	"fmt"
	"sync"
)

// Log is the state of one partition: segments of records, oldest first, the
// last one active, plus idempotent producers' state.
//
// The zero Log is an empty log with the default Config.
type Log struct {
	mu        sync.RWMutex
	cfg       Config     // with defaults filled in
	segs      []*segment // never empty once initialised; the last is active
	size      int64      // sum of segs[i].bytes
	producers map[int64]*producer
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
	l.segs = []*segment{newSegment(0, l.cfg)}
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

// Append assigns the batch's records contiguous offsets from EndOffset,
// stamps them with epoch, and appends them, rolling to a new segment
// whenever the active one is full. The batch is appended whole or not at
// all.
//
// For an idempotent producer (ProducerID != 0) the batch must continue the
// producer's sequence: a repeat of one of its last five batches is answered
// with the original result and Duplicate set (nothing is appended); a gap
// is ErrOutOfOrderSequence; reused sequence numbers that are not a cached
// batch are ErrDuplicateSequence. A producer the log has not seen must start
// at sequence 0.
//
// Append keeps the records' Key and Value slices rather than copying them;
// the caller must not modify them afterwards.
func (l *Log) Append(b Batch, epoch uint64) (AppendResult, error) {
	if len(b.Records) == 0 {
		return AppendResult{}, fmt.Errorf("%w: a batch needs at least one record, got none", ErrInvalidBatch)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.segs == nil {
		l.init(Config{})
	}

	if b.ProducerID != 0 {
		orig, err := l.checkSequence(b)
		if err != nil {
			return AppendResult{}, err
		}
		if orig != nil {
			return AppendResult{BaseOffset: orig.baseOffset, Count: orig.count(), Duplicate: true}, nil
		}
	}

	base := l.segs[len(l.segs)-1].next()
	interval := int64(l.cfg.IndexIntervalBytes)
	for i := range b.Records {
		r := b.Records[i] // a copy: the caller's slice is left as it was
		r.Offset = base + int64(i)
		r.Epoch = epoch
		size := recordBytes(&r)
		active := l.segs[len(l.segs)-1]
		if active.full(&l.cfg, size) {
			active.close()
			active = newSegment(r.Offset, l.cfg)
			l.segs = append(l.segs, active)
		}
		active.add(r, interval)
		l.size += size
	}

	if b.ProducerID != 0 {
		l.remember(b, base)
	}
	return AppendResult{BaseOffset: base, Count: len(b.Records)}, nil
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
