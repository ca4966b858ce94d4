package partlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"time"
)

// Snapshot encoding, version 2, in frames (see frame.go):
//
//	header frame:
//	  "MQPL", uvarint version (2)
//	  config: uvarint SegmentRecords, varint SegmentBytes,
//	          varint RetentionAge, varint RetentionBytes,
//	          uvarint IndexIntervalBytes
//	  uvarint segment count
//	one frame per segment, oldest first (the last is the active one):
//	  varint base offset, byte closed (0/1), uvarint batch count
//	  per batch: uvarint epoch, uvarint length, then the batch exactly as
//	  it was appended (the batch encoding, see codec.go)
//	producers frame:
//	  uvarint producer count; per producer, by ascending id:
//	  varint id, uvarint batch count, per batch oldest first:
//	  varint first seq, varint last seq, varint base offset
//
// The stored batches go out as they are, so writing a snapshot is
// checksumming and copying bytes, and reading one slices the batches back
// out of each segment's frame. Offsets are implicit (segment base plus the
// records before; a compacted batch carries its own base offset, and a
// segment that ends in a gap ends where the next begins) and indexes are not stored: decoding rebuilds them by
// appending the batches through the same code Append uses, so they come out
// identical. Everything is written in a fixed order, so equal logs encode
// to equal bytes.
const (
	snapshotMagic   = "MQPL"
	snapshotVersion = 5 // 3: the config carries SegmentAge; 4: Compact and DeleteRetention; 5: Name
)

// Snapshot is a point-in-time copy of a Log for writing out. Taking one is
// cheap (it shares the stored batches, which are never modified once
// written), and writing it does not hold up appends: this is what a raft
// FSM's Snapshot and Persist need.
type Snapshot struct {
	cfg       Config
	segs      []frozenSegment
	producers []producerEntry
}

type frozenSegment struct {
	base    int64
	batches []batchRef // capped at the length when taken; later appends land beyond it
	closed  bool
	pin     *filePin // for a closed segment whose bytes are in its file (evict.go)
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
		n := len(seg.batches)
		s.segs[i] = frozenSegment{base: seg.base, batches: seg.batches[:n:n], closed: seg.closed}
		if seg.closed && slices.ContainsFunc(seg.batches, func(b batchRef) bool { return b.data == nil }) {
			s.segs[i].pin = pinFile(l.segmentPath(seg.base), s.segs[i].batches)
		}
	}
	return s
}

// WriteTo writes a snapshot of the log's current state to w. It implements
// io.WriterTo; see Snapshot for writing a state captured earlier.
func (l *Log) WriteTo(w io.Writer) (int64, error) {
	return l.Snapshot().WriteTo(w)
}

// WriteTo writes the snapshot to w in the format ReadLog reads, returning
// the number of bytes written. A w that is a SharingWriter receives the
// stored batches by reference (WriteShared), the segment frames' checksums
// to compute when needed (WriteLater) and everything else through Write,
// unbuffered; any other w gets buffered writes.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	fw := newFrameWriter(w)
	buf := make([]byte, 0, 4<<10)

	buf = append(buf, snapshotMagic...)
	buf = binary.AppendUvarint(buf, snapshotVersion)
	buf = binary.AppendUvarint(buf, uint64(s.cfg.SegmentRecords))
	buf = binary.AppendVarint(buf, s.cfg.SegmentBytes)
	buf = binary.AppendVarint(buf, int64(s.cfg.RetentionAge))
	buf = binary.AppendVarint(buf, s.cfg.RetentionBytes)
	buf = binary.AppendUvarint(buf, uint64(s.cfg.IndexIntervalBytes))
	buf = binary.AppendVarint(buf, int64(s.cfg.SegmentAge))
	compact := uint64(0)
	if s.cfg.Compact {
		compact = 1
	}
	buf = binary.AppendUvarint(buf, compact)
	buf = binary.AppendVarint(buf, int64(s.cfg.DeleteRetention))
	buf = binary.AppendUvarint(buf, uint64(len(s.cfg.Name)))
	buf = append(buf, s.cfg.Name...)
	buf = binary.AppendUvarint(buf, uint64(len(s.segs)))
	fw.frame(buf)

	var pre [2 * binary.MaxVarintLen64]byte
	for i := range s.segs {
		seg := &s.segs[i]
		buf = binary.AppendVarint(buf[:0], seg.base)
		closed := byte(0)
		if seg.closed {
			closed = 1
		}
		buf = append(buf, closed)
		buf = binary.AppendUvarint(buf, uint64(len(seg.batches)))
		// The frame's length and checksum come first, so the batches are
		// passed over twice: once to checksum them, once to copy them out.
		// A SharingWriter takes the checksum later, when it is read.
		n := len(buf)
		for j := range seg.batches {
			b := &seg.batches[j]
			n += len(b.appendPrefix(pre[:0])) + int(b.dataLen)
		}
		if seg.pin != nil {
			if err := fw.pinned(seg.pin, buf, n); err != nil {
				return fw.cw.n, err
			}
			continue
		}
		if fw.share != nil {
			head, batches := bytes.Clone(buf), seg.batches
			fw.beginLater(n, func() uint32 { return segmentCRC(head, batches) })
		} else {
			fw.begin(n, segmentCRC(buf, seg.batches))
		}
		fw.write(buf)
		for j := range seg.batches {
			b := &seg.batches[j]
			fw.write(b.appendPrefix(pre[:0]))
			fw.writeStored(b.data)
		}
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

// segmentCRC is the CRC of a segment frame: its header, then each batch's
// prefix and bytes.
func segmentCRC(head []byte, batches []batchRef) uint32 {
	var pre [2 * binary.MaxVarintLen64]byte
	crc := crc32.Update(0, castagnoli, head)
	for j := range batches {
		b := &batches[j]
		crc = crc32.Update(crc32.Update(crc, castagnoli, b.appendPrefix(pre[:0])), castagnoli, b.data)
	}
	return crc
}

// appendPrefix writes what precedes a batch in a segment frame.
func (b *batchRef) appendPrefix(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, b.epoch)
	return binary.AppendUvarint(dst, uint64(b.dataLen))
}

// pinned writes the frame of a segment whose bytes are in its file, head
// being the frame's header and n its length. A SharingWriter gets the
// batches as a source to read when the stream is read; any other writer
// gets them now, the file read once.
func (fw *frameWriter) pinned(pin *filePin, head []byte, n int) error {
	if fw.share != nil {
		head := bytes.Clone(head)
		fw.beginLater(n, func() uint32 {
			crc, _ := pin.crc(head) // a file that cannot be read fails the source below, which says why
			return crc
		})
		fw.write(head)
		if fw.err == nil {
			k, err := fw.share.WriteSource(n-len(head), pin.writeBatches)
			fw.cw.n += int64(k)
			fw.err = err
		}
		return fw.err
	}
	data, err := pin.segmentBytes()
	if err != nil {
		return err
	}
	var pre [2 * binary.MaxVarintLen64]byte
	crc := crc32.Update(0, castagnoli, head)
	for j := range pin.batches {
		crc = crc32.Update(crc32.Update(crc, castagnoli, pin.batches[j].appendPrefix(pre[:0])), castagnoli, data[j])
	}
	fw.begin(n, crc)
	fw.write(head)
	for j := range pin.batches {
		fw.write(pin.batches[j].appendPrefix(pre[:0]))
		fw.write(data[j])
	}
	return fw.err
}

// ReadLog reads a log written by WriteTo. It reads exactly the snapshot's
// bytes from r and no further. Damaged or truncated input is an error
// wrapping ErrCorrupt, never a panic; the snapshot is also checked for
// consistency (contiguous segments, only the last one active, plausible
// producer state), since a log that decoded but broke those rules would
// fail later in confusing ways.
//
// The stored batches share the buffers read for each segment, so a
// segment's memory is released as a whole when retention deletes it.
func ReadLog(r io.Reader) (*Log, error) {
	return readLog(r, true, nil)
}

// readLog is ReadLog, checking frames' checksums when verify says so
// and handing each segment to read, when given, as soon as it is read:
// last says it is the active one.
func readLog(r io.Reader, verify bool, read func(l *Log, seg *segment, last bool)) (*Log, error) {
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
		if read != nil {
			read(l, seg, i == nsegs-1)
		}
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
	cfg.SegmentAge = time.Duration(d.varint("SegmentAge"))
	if c := d.uvarint("Compact"); d.err == nil && c > 1 {
		d.failf("Compact is %d; want 0 or 1", c)
	} else {
		cfg.Compact = c == 1
	}
	cfg.DeleteRetention = time.Duration(d.varint("DeleteRetention"))
	if n := d.uvarint("Name length"); d.err == nil && n > uint64(len(d.p)) {
		d.failf("Name length %d, but only %d bytes are left", n, len(d.p))
	} else {
		cfg.Name = string(d.raw(int(n), "Name"))
	}
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
// appending its batches through segment.add, exactly as Append built them.
// The batches stay in p, which they share: a segment's memory is released
// as a whole when retention deletes it.
func decodeSegment(p []byte, cfg Config, what func() string) (*segment, error) {
	d := &decoder{p: p, total: len(p), whatFn: func() string { return "snapshot " + what() }}
	base := d.varint("base offset")
	closed := d.byte("closed flag")
	// Each batch takes its epoch, its length and at least minBatchBytes.
	n := d.count("batch count", 2+minBatchBytes)
	if d.err == nil {
		switch {
		case closed > 1:
			d.failf("closed flag is %d; want 0 or 1", closed)
		case base < 0:
			d.failf("base offset %d is negative", base)
		case closed == 1 && n == 0 && !cfg.Compact:
			d.failf("closed segment with no records; segments only roll once they hold a record, and only compaction empties one")
		}
	}
	if d.err != nil {
		return nil, d.err
	}

	seg := &segment{base: base, end: base, batches: make([]batchRef, 0, n)}
	interval := int64(cfg.IndexIntervalBytes)
	for i := range n {
		epoch := d.uvarint("epoch")
		size := d.uvarint("batch length")
		if d.err == nil && size > uint64(len(d.p)) {
			d.failf("batch %d of %d: length %d, but only %d bytes are left", i+1, n, size, len(d.p))
		}
		data := d.raw(int(size), "batch")
		if d.err != nil {
			return nil, d.err
		}
		info, err := parseBatch(data)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s, batch %d of %d: %w", what(), i+1, n, err)
		}
		switch {
		case info.Count == 0:
			d.failf("batch %d of %d has no records; an appended batch has at least one", i+1, n)
		case seg.records+int64(info.Count) > maxSegmentRecords:
			d.failf("more than %d records; a segment holds at most that many", int64(maxSegmentRecords))
		case base > math.MaxInt64-seg.records-int64(info.Count):
			d.failf("base offset %d with %d records is past %d", base, seg.records+int64(info.Count), int64(math.MaxInt64))
		}
		ref := batchRef{data: data, base: seg.next(), maxTS: info.MaxTimestamp, epoch: epoch, count: int32(info.Count)}
		if info.compacted() {
			// Compaction may have dropped whole batches before this one.
			if info.Base < seg.next() {
				d.failf("batch %d of %d starts at offset %d, inside the batch before it (which ends at %d)", i+1, n, info.Base, seg.next())
			}
			ref.base, ref.span = info.Base, int32(info.Span)
		}
		if d.err != nil {
			return nil, d.err
		}
		seg.add(ref, &info, interval)
	}
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
		// A compacted segment may end in a gap; the next one's base says
		// where it ends.
		prev := l.segs[n-1]
		if seg.base < prev.next() || (seg.base > prev.next() && (!prev.closed || !l.cfg.Compact)) {
			return fmt.Errorf("%w: snapshot %s starts at offset %d, but the segment before it ends at %d; segments must follow each other",
				ErrCorrupt, what(), seg.base, prev.next())
		}
		prev.end = seg.base
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
