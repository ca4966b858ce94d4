package partlog

import (
	"fmt"
	"math"
	"sort"
)

// maxCachedBatches is how many recent batches are remembered per producer.
// Kafka keeps five because an idempotent producer may have at most five
// requests in flight, so a retry is always of one of the last five.
const maxCachedBatches = 5

// batchMeta is what is remembered of a written batch: enough to recognise a
// retry of it and answer with the original offsets.
type batchMeta struct {
	firstSeq, lastSeq int32
	baseOffset        int64
}

func (m batchMeta) count() int { return int(m.lastSeq-m.firstSeq) + 1 }

// producer holds one idempotent producer's recent batches, oldest first.
type producer struct {
	batches []batchMeta
}

func (p *producer) newest() batchMeta { return p.batches[len(p.batches)-1] }

// checkSequence decides what to do with an idempotent batch of count
// records from producer pid starting at sequence baseSeq: it returns the
// original batch when it is a retry of a cached one, nil when it should be
// appended, or an error.
func (l *Log) checkSequence(pid int64, baseSeq int32, count int) (*batchMeta, error) {
	first := int64(baseSeq)
	last := first + int64(count) - 1
	if first < 0 {
		return nil, fmt.Errorf("%w: producer %d sent base sequence %d; sequence numbers start at 0 and are never negative",
			ErrInvalidBatch, pid, first)
	}
	if last > math.MaxInt32 {
		return nil, fmt.Errorf("%w: producer %d: %d records from sequence %d would pass %d; this lab does not wrap sequences, so start a new producer id",
			ErrInvalidBatch, pid, count, first, int64(math.MaxInt32))
	}

	p := l.producers[pid]
	if p == nil {
		if first != 0 {
			return nil, fmt.Errorf("%w: producer %d is unknown to this partition, so its first batch must start at sequence 0, got %d",
				ErrOutOfOrderSequence, pid, first)
		}
		return nil, nil
	}

	// Kafka matches a retry on both ends of the batch.
	for i := range p.batches {
		if int64(p.batches[i].firstSeq) == first && int64(p.batches[i].lastSeq) == last {
			return &p.batches[i], nil
		}
	}

	want := int64(p.newest().lastSeq) + 1
	oldest := p.batches[0]
	switch {
	case first == want:
		return nil, nil
	case first > want:
		return nil, fmt.Errorf("%w: producer %d: expected sequence %d, got %d (sequences %d..%d are missing)",
			ErrOutOfOrderSequence, pid, want, first, want, first-1)
	case first < int64(oldest.firstSeq):
		return nil, fmt.Errorf("%w: producer %d: sequence %d is older than the %d cached batches (the oldest starts at %d), so its original offsets are no longer known; expected sequence %d",
			ErrDuplicateSequence, pid, first, len(p.batches), oldest.firstSeq, want)
	default:
		return nil, fmt.Errorf("%w: producer %d: sequences %d..%d were already written, but not as one batch (cached batches: %s); expected sequence %d",
			ErrDuplicateSequence, pid, first, last, p.describe(), want)
	}
}

func (p *producer) describe() string {
	s := ""
	for i, m := range p.batches {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d..%d", m.firstSeq, m.lastSeq)
	}
	return s
}

// remember records an appended idempotent batch, forgetting the oldest
// cached one beyond maxCachedBatches. checkSequence has validated it.
func (l *Log) remember(pid int64, baseSeq int32, count int, base int64) {
	p := l.producers[pid]
	if p == nil {
		p = &producer{batches: make([]batchMeta, 0, maxCachedBatches)}
		l.producers[pid] = p
	}
	m := batchMeta{firstSeq: baseSeq, lastSeq: baseSeq + int32(count-1), baseOffset: base}
	if len(p.batches) == maxCachedBatches {
		copy(p.batches, p.batches[1:])
		p.batches = p.batches[:maxCachedBatches-1]
	}
	p.batches = append(p.batches, m)
}

// Producers describes the idempotent producers the log knows, by id.
// Producer state is kept for as long as the log lives (and travels in
// snapshots); unlike Kafka there is no expiry.
func (l *Log) Producers() []ProducerState {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]ProducerState, 0, len(l.producers))
	for pid, p := range l.producers {
		out = append(out, ProducerState{ProducerID: pid, LastSeq: p.newest().lastSeq, CachedBatches: len(p.batches)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// producerList returns copies of the producers' state sorted by id, so
// snapshots encode them in a deterministic order.
func (l *Log) producerList() []producerEntry {
	out := make([]producerEntry, 0, len(l.producers))
	for pid, p := range l.producers {
		out = append(out, producerEntry{pid: pid, batches: append([]batchMeta(nil), p.batches...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

type producerEntry struct {
	pid     int64
	batches []batchMeta
}
