package partlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"
)

// Snapshot encoding, version 1, in frames (see frame.go):
//
//	header frame:
//	  "MQPL", uvarint version (1)
//	  config: uvarint SegmentRecords, varint SegmentBytes,
//	          varint RetentionAge, varint RetentionBytes,
//	          uvarint IndexIntervalBytes
//	  uvarint segment count
//	one frame per segment, oldest first (the last is the active one):
//	  varint base offset, byte closed (0/1), uvarint record count
//	  uvarint total MsgID bytes, then the MsgIDs concatenated
//	  per record: uvarint Epoch, then the record body as in a batch
//	producers frame:
//	  uvarint producer count; per producer, by ascending id:
//	  varint id, uvarint batch count, per batch oldest first:
//	  varint first seq, varint last seq, varint base offset
//
// Offsets are implicit (segment base + position) and indexes are not
// stored: decoding rebuilds them by replaying the records through the same
// code Append uses, so they come out identical. Everything is written in a
// fixed order, so equal logs encode to equal bytes.
const (
	snapshotMagic   = "MQPL"
	snapshotVersion = 1
)

// Snapshot is a point-in-time copy of a Log for writing out. Taking one is
// cheap (it shares the records, which are never modified once written), and
// writing it does not hold up appends: this is what a raft FSM's Snapshot
// and Persist need.
type Snapshot struct {
	cfg       Config
	segs      []frozenSegment
	producers []producerEntry
}

type frozenSegment struct {
	base    int64
	records []Record // capped at the length when taken; later appends land beyond it
	closed  bool
}

// Snapshot captures the log's current state.
func (l *Log) Snapshot() *Snapshot {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.segs == nil {
		return &Snapshot{cfg: Config{}.withDefaults(), segs: []frozenSegment{{}}}
	}
	s := &Snapshot{cfg: l.cfg, segs: make([]frozenSegment, len(l.segs)), producers: l.producerList()}
	for i, seg := range l.segs {
		s.segs[i] = frozenSegment{base: seg.base, records: seg.records[:len(seg.records):len(seg.records)], closed: seg.closed}
	}
	return s
}

// WriteTo writes a snapshot of the log's current state to w. It implements
// io.WriterTo; see Snapshot for writing a state captured earlier.
func (l *Log) WriteTo(w io.Writer) (int64, error) {
	return l.Snapshot().WriteTo(w)
}

// WriteTo writes the snapshot to w in the format ReadLog reads, returning
// the number of bytes written.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	fw := newFrameWriter(w)
	buf := make([]byte, 0, 64<<10)

	buf = append(buf, snapshotMagic...)
	buf = binary.AppendUvarint(buf, snapshotVersion)
	buf = binary.AppendUvarint(buf, uint64(s.cfg.SegmentRecords))
	buf = binary.AppendVarint(buf, s.cfg.SegmentBytes)
	buf = binary.AppendVarint(buf, int64(s.cfg.RetentionAge))
	buf = binary.AppendVarint(buf, s.cfg.RetentionBytes)
	buf = binary.AppendUvarint(buf, uint64(s.cfg.IndexIntervalBytes))
	buf = binary.AppendUvarint(buf, uint64(len(s.segs)))
	fw.frame(buf)

	for i := range s.segs {
		seg := &s.segs[i]
		buf = binary.AppendVarint(buf[:0], seg.base)
		closed := byte(0)
		if seg.closed {
			closed = 1
		}
		buf = append(buf, closed)
		buf = binary.AppendUvarint(buf, uint64(len(seg.records)))
		buf = appendMsgIDs(buf, seg.records)
		var prev int64
		for j := range seg.records {
			r := &seg.records[j]
			buf = binary.AppendUvarint(buf, r.Epoch)
			buf = appendRecordBody(buf, r, prev)
			prev = r.Timestamp
		}
		fw.frame(buf)
	}

	buf = binary.AppendUvarint(buf[:0], uint64(len(s.producers)))
	for _, p := range s.producers {
		buf = binary.AppendVarint(buf, p.pid)
		buf = binary.AppendUvarint(buf, uint64(len(p.batches)))
		for _, m := range p.batches {
			buf = binary.AppendVarint(buf, int64(m.firstSeq))
			buf = binary.AppendVarint(buf, int64(m.lastSeq))
			buf = binary.AppendVarint(buf, m.baseOffset)
		}
	}
	fw.frame(buf)
	return fw.finish()
}

// ReadLog reads a log written by WriteTo. It reads exactly the snapshot's
// bytes from r and no further. Damaged or truncated input is an error
// wrapping ErrCorrupt, never a panic; the snapshot is also checked for
// consistency (contiguous segments, only the last one active, plausible
// producer state), since a log that decoded but broke those rules would
// fail later in confusing ways.
//
// The records' Key and Value bytes share the buffers read for each segment,
// so a segment's memory is released as a whole when retention deletes it.
func ReadLog(r io.Reader) (*Log, error) {
	return readLog(r, true)
}

func readLog(r io.Reader, verify bool) (*Log, error) {
	fr := &frameReader{r: r, verify: verify}
	p, err := fr.next(func() string { return "header" })
	if err != nil {
		return nil, err
	}
	cfg, nsegs, err := decodeHeader(p)
	if err != nil {
		return nil, err
	}

	l := &Log{cfg: cfg, producers: make(map[int64]*producer)}
	// A damaged count must not allocate: grow as segments actually arrive.
	l.segs = make([]*segment, 0, min(nsegs, 1024))
	for i := range nsegs {
		what := func() string { return fmt.Sprintf("segment %d of %d", i+1, nsegs) }
		p, err := fr.next(what)
		if err != nil {
			return nil, err
		}
		seg, err := decodeSegment(p, cfg, what)
		if err != nil {
			return nil, err
		}
		if err := l.checkNextSegment(seg, i == nsegs-1, what); err != nil {
			return nil, err
		}
		l.segs = append(l.segs, seg)
		l.size += seg.bytes
	}

	p, err = fr.next(func() string { return "producers" })
	if err != nil {
		return nil, err
	}
	if err := l.decodeProducers(p); err != nil {
		return nil, err
	}
	return l, nil
}

func decodeHeader(p []byte) (Config, int, error) {
	d := newDecoder(p, "snapshot header")
	magic := d.raw(len(snapshotMagic), "magic")
	if d.err == nil && string(magic) != snapshotMagic {
		return Config{}, 0, fmt.Errorf("%w: snapshot starts with %q; an mqlab partition snapshot starts with %q", ErrCorrupt, magic, snapshotMagic)
	}
	if v := d.uvarint("version"); d.err == nil && v != snapshotVersion {
		d.failf("unknown version %d; this build reads version %d", v, snapshotVersion)
	}
	var cfg Config
	segRecords := d.uvarint("SegmentRecords")
	cfg.SegmentBytes = d.varint("SegmentBytes")
	cfg.RetentionAge = time.Duration(d.varint("RetentionAge"))
	cfg.RetentionBytes = d.varint("RetentionBytes")
	interval := d.uvarint("IndexIntervalBytes")
	nsegs := d.uvarint("segment count")
	d.done()
	if d.err != nil {
		return Config{}, 0, d.err
	}
	if segRecords > maxSegmentRecords || interval > math.MaxInt32 {
		return Config{}, 0, fmt.Errorf("%w: snapshot config: SegmentRecords %d or IndexIntervalBytes %d is beyond %d", ErrCorrupt, segRecords, interval, int64(math.MaxInt32))
	}
	cfg.SegmentRecords, cfg.IndexIntervalBytes = int(segRecords), int(interval)
	if err := cfg.Validate(); err != nil {
		return Config{}, 0, fmt.Errorf("%w: snapshot config: %w", ErrCorrupt, err)
	}
	if nsegs == 0 || nsegs > math.MaxInt32 {
		return Config{}, 0, fmt.Errorf("%w: snapshot says it has %d segments; a log has at least one (the active segment) and this lab at most %d", ErrCorrupt, nsegs, int64(math.MaxInt32))
	}
	return cfg.withDefaults(), int(nsegs), nil
}

// decodeSegment parses one segment frame and rebuilds its indexes by
// replaying the records through segment.add, exactly as Append built them.
func decodeSegment(p []byte, cfg Config, what func() string) (*segment, error) {
	d := &decoder{p: p, total: len(p), whatFn: func() string { return "snapshot " + what() }}
	base := d.varint("base offset")
	closed := d.byte("closed flag")
	n := d.count("record count", 1+minRecordBytes)
	ids := d.msgIDs()
	if d.err == nil {
		switch {
		case closed > 1:
			d.failf("closed flag is %d; want 0 or 1", closed)
		case base < 0 || base > math.MaxInt64-int64(n):
			d.failf("base offset %d with %d records is outside 0..%d", base, n, int64(math.MaxInt64))
		case n > maxSegmentRecords:
			d.failf("%d records; a segment holds at most %d", n, int64(maxSegmentRecords))
		case closed == 1 && n == 0:
			d.failf("closed segment with no records; segments only roll once they hold a record")
		}
	}
	if d.err != nil {
		return nil, d.err
	}

	seg := &segment{base: base}
	interval := int64(cfg.IndexIntervalBytes)
	// The frame holds all the key+value bytes, so it bounds how many index
	// entries the interval can produce (plus one for the time index entry
	// added on close).
	seg.reserve(n, int(min(int64(n), int64(len(p))/interval+2)))
	var prev int64
	idPos := 0
	for i := range n {
		var r Record
		r.Offset = base + int64(i)
		r.Epoch = d.uvarint("epoch")
		d.recordBody(&r, prev, ids, &idPos)
		if d.err != nil {
			return nil, d.err
		}
		prev = r.Timestamp
		seg.add(r, interval)
	}
	d.msgIDsUsed(ids, idPos)
	d.done()
	if d.err != nil {
		return nil, d.err
	}
	if closed == 1 {
		seg.close()
	}
	return seg, nil
}

// checkNextSegment checks that seg can follow the segments read so far.
func (l *Log) checkNextSegment(seg *segment, last bool, what func() string) error {
	if n := len(l.segs); n > 0 {
		if prev := l.segs[n-1]; seg.base != prev.next() {
			return fmt.Errorf("%w: snapshot %s starts at offset %d, but the segment before it ends at %d; segments must be contiguous",
				ErrCorrupt, what(), seg.base, prev.next())
		}
	}
	if seg.closed == last {
		want := "closed"
		if last {
			want = "active (not closed)"
		}
		return fmt.Errorf("%w: snapshot %s should be %s: only the last segment is active", ErrCorrupt, what(), want)
	}
	return nil
}

func (l *Log) decodeProducers(p []byte) error {
	d := newDecoder(p, "snapshot producers")
	// Least bytes per producer: id, batch count, and one batch of three.
	n := d.count("producer count", 5)
	end := l.end()
	prevPID := int64(math.MinInt64)
	for i := 0; i < n && d.err == nil; i++ {
		pid := d.varint("producer id")
		nb := d.uvarint("batch count")
		if d.err != nil {
			break
		}
		if pid == 0 || (i > 0 && pid <= prevPID) {
			d.failf("producer id %d after %d; ids are non-zero and strictly ascending", pid, prevPID)
			break
		}
		if nb == 0 || nb > maxCachedBatches {
			d.failf("producer %d has %d cached batches; want 1..%d", pid, nb, maxCachedBatches)
			break
		}
		prevPID = pid
		pr := &producer{batches: make([]batchMeta, 0, maxCachedBatches)}
		for j := uint64(0); j < nb && d.err == nil; j++ {
			m := batchMeta{firstSeq: d.int32("first sequence"), lastSeq: d.int32("last sequence"), baseOffset: d.varint("base offset")}
			if d.err != nil {
				break
			}
			if problem := checkBatchMeta(m, pr, end); problem != "" {
				d.failf("producer %d batch %d: %s", pid, j+1, problem)
				break
			}
			pr.batches = append(pr.batches, m)
		}
		l.producers[pid] = pr
	}
	d.done()
	return d.err
}

// checkBatchMeta returns what is wrong with m as the next cached batch of
// pr, in a log ending at end, or "".
func checkBatchMeta(m batchMeta, pr *producer, end int64) string {
	switch {
	case m.firstSeq < 0 || m.lastSeq < m.firstSeq:
		return fmt.Sprintf("sequences %d..%d; want 0 <= first <= last", m.firstSeq, m.lastSeq)
	case m.baseOffset < 0 || m.baseOffset > end-int64(m.count()):
		return fmt.Sprintf("%d records at offset %d do not fit in a log ending at %d", m.count(), m.baseOffset, end)
	case len(pr.batches) > 0 && int64(m.firstSeq) != int64(pr.newest().lastSeq)+1:
		return fmt.Sprintf("starts at sequence %d, but the batch before it ends at %d", m.firstSeq, pr.newest().lastSeq)
	case len(pr.batches) > 0 && m.baseOffset < pr.newest().baseOffset+int64(pr.newest().count()):
		return fmt.Sprintf("offset %d overlaps the batch before it", m.baseOffset)
	}
	return ""
}
