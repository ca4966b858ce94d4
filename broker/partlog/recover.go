package partlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A log with a folder keeps, beside its segment files, the checkpoint of
// what it has applied (CheckpointFile): the raft index of the last entry
// that appended a batch and the log end offset after it, and the same for
// the append before. A restarted replica reads its log back from the files
// (Recover) and asks raft only for the entries after that index, so no
// entry is applied twice. The previous pair is what recovery falls back to
// when the last batch was torn: its entry was being written when the node
// died, so it is applied again.
const CheckpointFile = "applied-checkpoint"

// Recovery is what Recover found in a log's folder.
type Recovery struct {
	// Found: the folder held a log and its checkpoint, and they agree; the
	// log returned holds it. When false, the folder is of no use (missing,
	// or files and checkpoint disagree) and the log is empty.
	Found bool
	// Applied is the raft index of the last entry the files hold.
	Applied       uint64
	Segments      int
	Start, End    int64 // the offsets held: [Start, End)
	Batches       int
	CutBytes      int64 // bytes cut from the tail: a torn or damaged batch
	CutOffset     int64 // the offset where the cut began (End, after it)
	CutSegment    int64 // the base offset of the segment that was cut
	RebuiltActive bool  // the active segment's indexes were rebuilt
	// Rebuilt lists the index files of closed segments that were damaged
	// or missing and were written again from their .log.
	Rebuilt []IndexRebuild
}

// IndexRebuild is one index file of a closed segment that recovery found
// damaged and wrote again from the segment's .log.
type IndexRebuild struct {
	Segment int64  // the segment's base offset
	File    string // the file's name, 00000000000000001500.index
	Problem string // what was wrong with it
}

// checkpoint is the content of CheckpointFile.
type checkpoint struct {
	index, end         uint64
	prevIndex, prevEnd uint64
}

func (c checkpoint) encode() []byte {
	// Fixed width, so one write at the start of the file replaces it.
	return fmt.Appendf(nil, "%020d %020d\n%020d %020d\n", c.index, c.end, c.prevIndex, c.prevEnd)
}

func parseCheckpoint(p []byte) (checkpoint, bool) {
	var c checkpoint
	lines := strings.Split(strings.TrimSpace(string(p)), "\n")
	if len(lines) != 2 {
		return c, false
	}
	read := func(line string, a, b *uint64) bool {
		f := strings.Fields(line)
		if len(f) != 2 {
			return false
		}
		var err1, err2 error
		*a, err1 = strconv.ParseUint(f[0], 10, 64)
		*b, err2 = strconv.ParseUint(f[1], 10, 64)
		return err1 == nil && err2 == nil
	}
	return c, read(lines[0], &c.index, &c.end) && read(lines[1], &c.prevIndex, &c.prevEnd)
}

// NoteApplied records that the raft entry at index has been applied.
// When the entry changed the log's end (an append) it becomes the
// checkpoint, so recovery knows which entries the files already hold; an
// entry that appended nothing is simply applied again after a restart,
// to the same effect. The checkpoint reaches its file when the log is
// detached (DetachDir: the replica stops, which is when a lab node dies),
// not at every append, which would double the writes of the apply path.
func (l *Log) NoteApplied(index uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lf := l.files
	if lf == nil || lf.err != nil {
		return
	}
	end := uint64(l.end())
	if end == lf.ckpt.end && lf.ckpt.index != 0 {
		return
	}
	lf.ckpt = checkpoint{index: index, end: end, prevIndex: lf.ckpt.index, prevEnd: lf.ckpt.end}
}

// writeCheckpoint puts the checkpoint in its file.
func (lf *logFiles) writeCheckpoint() {
	if lf.err != nil || lf.faulted() {
		return
	}
	if err := os.WriteFile(filepath.Join(lf.dir, CheckpointFile), lf.ckpt.encode(), 0o644); err != nil {
		lf.fail(err)
	}
}

// Recover reads a log back from the folder a log with config cfg wrote
// (AttachDir), as a restarting Kafka broker does: every segment's batches
// in order, each CRC checked; a tail that is not a whole batch with a good
// CRC (a write torn by a crash) is cut off, and the active segment's
// indexes are rebuilt from its batches. The log returned writes to dir
// from then on. When the folder holds nothing usable, Recovery.Found is
// false and the log is an empty one, not attached: the caller rebuilds it
// (from raft) and attaches it.
func Recover(cfg Config, dir string) (*Log, Recovery, error) {
	l, err := New(cfg)
	if err != nil {
		return nil, Recovery{}, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return l, Recovery{}, nil
	}
	ckpt, ok := parseCheckpoint(raw)
	if !ok {
		return l, Recovery{}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return l, Recovery{}, nil
	}
	var bases []int64
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), LogSuffix)
		if !ok {
			continue
		}
		if b, err := strconv.ParseInt(stem, 10, 64); err == nil && SegmentFileName(b, LogSuffix) == e.Name() {
			bases = append(bases, b)
		}
	}
	slices.Sort(bases)
	if len(bases) == 0 {
		return l, Recovery{}, nil
	}

	rec := Recovery{Start: bases[0], Segments: len(bases)}
	l.segs = []*segment{newSegment(bases[0])}
	var closed []wantIndexes // what the closed segments' index files should hold
	var active []byte        // the last segment's bytes, kept whole
	for i, base := range bases {
		path := filepath.Join(dir, SegmentFileName(base, LogSuffix))
		data, err := os.ReadFile(path)
		if err != nil {
			return emptyLog(cfg), Recovery{}, nil
		}
		if i > 0 {
			prev := l.segs[len(l.segs)-1]
			if l.end() > base || (l.end() < base && !cfg.Compact) {
				return emptyLog(cfg), Recovery{}, nil // an overlap, or a gap compaction did not make: not a log this package wrote
			}
			// A gap: compaction dropped the segment's last batches.
			prev.end = base
			prev.close()
			dropBytes(prev)
			l.segs = append(l.segs, newSegment(base))
		}
		pos := int64(0)
		for pos < int64(len(data)) {
			kb, err := ParseKafkaBatch(data[pos:])
			if err != nil || !kb.CRCValid || kb.BaseOffset < l.end() || (kb.BaseOffset > l.end() && !cfg.Compact) {
				break
			}
			raw := data[pos : pos+kb.Size()]
			if asSent(raw, kb) {
				if err := l.recoverWire(raw, kb); err != nil {
					break
				}
			} else {
				b, epoch, err := batchFromKafka(raw)
				if err != nil {
					break
				}
				if err := l.recoverAppend(b, kb, epoch); err != nil {
					break
				}
			}
			last := l.segs[len(l.segs)-1]
			b := &last.batches[len(last.batches)-1]
			// Read back from the file, the batch turns into the same bytes
			// again (dataFromFile), so a closed segment may let them go.
			b.filePos, b.fileLen, b.fromFile = pos, int32(kb.Size()), true
			rec.Batches++
			pos += kb.Size()
		}
		if l.segs[len(l.segs)-1].base != base {
			return emptyLog(cfg), Recovery{}, nil // rolled where the writer did not: another config
		}
		if pos < int64(len(data)) {
			// A torn or damaged tail: cut it, and every later segment, as
			// Kafka's recovery does.
			rec.CutBytes, rec.CutOffset, rec.CutSegment = int64(len(data))-pos, l.end(), base
			materializePins(path, false)
			if err := os.Truncate(path, pos); err != nil {
				return nil, Recovery{}, fmt.Errorf("recover %s: %w", dir, err)
			}
			for _, later := range bases[i+1:] {
				materializePins(filepath.Join(dir, SegmentFileName(later, LogSuffix)), false)
				for _, suffix := range [...]string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
					os.Remove(filepath.Join(dir, SegmentFileName(later, suffix)))
				}
			}
			rec.Segments = i + 1
			active = data[:pos]
			break
		}
		if i < len(bases)-1 {
			closed = append(closed, segmentIndexes(base, data, int64(l.cfg.IndexIntervalBytes)))
		}
		active = data
	}
	rec.End = l.end()

	// Which entry the files end at: the checkpoint's, or the one before it
	// when the last append was torn off.
	switch uint64(rec.End) {
	case ckpt.end:
		rec.Applied = ckpt.index
	case ckpt.prevEnd:
		rec.Applied, ckpt = ckpt.prevIndex, checkpoint{index: ckpt.prevIndex, end: ckpt.prevEnd}
	default:
		return emptyLog(cfg), Recovery{}, nil
	}
	if rec.Applied == 0 {
		return emptyLog(cfg), Recovery{}, nil
	}

	// Closed segments keep their files; an index file of theirs that is
	// not what their .log says is written again, as Kafka rebuilds an
	// index that fails its sanity check.
	for _, w := range closed {
		fixed, err := w.repair(dir)
		if err != nil {
			return nil, Recovery{}, fmt.Errorf("recover %s: %w", dir, err)
		}
		rec.Rebuilt = append(rec.Rebuilt, fixed...)
	}

	// Attach the folder as it is: the active segment is appended to and
	// its indexes are written afresh.
	lf := &logFiles{dir: dir, interval: int64(l.cfg.IndexIntervalBytes), ckpt: ckpt}
	act := l.segs[len(l.segs)-1]
	if err := lf.adopt(act, active); err != nil {
		return nil, Recovery{}, fmt.Errorf("recover %s: %w", dir, err)
	}
	l.files, l.fileDir = lf, dir
	rec.RebuiltActive = true
	rec.Found = true
	return l, rec, nil
}

// emptyLog is an empty log with cfg (already validated by Recover's New).
func emptyLog(cfg Config) *Log {
	l := &Log{}
	l.init(cfg)
	return l
}

// recoverAppend appends a batch read back from a file: its offsets are
// where it was written, and an idempotent producer's sequence is taken as
// it is (its earlier batches may be gone with retention), then remembered.
//
// A batch compaction left with gaps (records whose offset deltas skip,
// or a last offset beyond its last record) is kept in the compacted
// encoding, with its base offset and span as the file says.
func (l *Log) recoverAppend(b Batch, kb KafkaBatch, epoch uint64) error {
	if len(b.Records) == 0 {
		return fmt.Errorf("%w: an empty batch", ErrInvalidBatch)
	}
	span := kb.LastOffset - kb.BaseOffset + 1
	if span <= 0 || span > maxSegmentRecords {
		return fmt.Errorf("%w: a batch spanning %d offsets", ErrCorrupt, span)
	}
	gaps := span != int64(len(b.Records))
	var data []byte
	if gaps {
		data = encodeCompacted(b.Records, kb.BaseOffset, int32(span), b.ProducerID, b.BaseSeq, !slices.ContainsFunc(b.Records, func(r Record) bool { return r.MsgID != "" }))
	} else {
		data = EncodeBatch(b)
	}
	info, err := parseBatch(data)
	if err != nil {
		return err
	}
	ref := batchRef{data: data, base: kb.BaseOffset, maxTS: info.MaxTimestamp, epoch: epoch, count: int32(info.Count)}
	if gaps {
		ref.span = int32(span)
	}
	files := l.files
	l.files = nil // the batch is in its file already
	l.add(ref, &info)
	l.files = files
	if info.ProducerID != 0 {
		l.remember(info.ProducerID, info.BaseSeq, int(span), ref.base)
	}
	return nil
}

// adopt takes over the files of the active segment s, whose .log holds
// data: it reopens .log to append and rewrites .index and .timeindex from
// the batches, as they would have been written.
func (lf *logFiles) adopt(s *segment, data []byte) error {
	f := &segmentFiles{base: s.base, maxTS: -1 << 63, lastTI: -1 << 63}
	for _, suffix := range [...]string{IndexSuffix, TimeIndexSuffix} {
		if err := os.Remove(filepath.Join(lf.dir, SegmentFileName(s.base, suffix))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	file, err := os.OpenFile(filepath.Join(lf.dir, SegmentFileName(s.base, LogSuffix)), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	f.log = file
	s.files = f
	pos := int64(0)
	for j := range s.batches {
		kb, err := ParseKafkaBatch(data[pos:])
		if err != nil {
			return err
		}
		b := &s.batches[j]
		lf.track(f, b.next()-1-s.base, b.maxTS/1e6, pos, kb.Size())
		pos += kb.Size()
	}
	f.size = pos
	return lf.err
}

// asSent reports whether the Kafka batch raw, read from a file, is one a
// Kafka client sent, kept as it arrived: compressed, or without the
// message id header the lab's own records carry, and without gaps the
// cleaner made.
func asSent(raw []byte, kb KafkaBatch) bool {
	if kb.LastOffset-kb.BaseOffset+1 != int64(kb.Count) {
		return false
	}
	if kb.Attributes&kafkaCodecMask != 0 {
		return true
	}
	recs := raw[KafkaBatchHeaderLen:]
	for range kb.Count {
		r, rest, ok := readKafkaRecord(recs)
		if !ok {
			return false
		}
		for _, h := range r.headers {
			if h.Key == MsgIDHeader {
				return false
			}
		}
		recs = rest
	}
	return true
}

// recoverWire appends a batch read back from a file as a Kafka client
// sent it (asSent), kept in those bytes, as it was before the restart.
func (l *Log) recoverWire(raw []byte, kb KafkaBatch) error {
	kv, minTS, err := wireInfo(raw)
	if err != nil {
		return err
	}
	data := AppendWireBatch(make([]byte, 0, WireBatchSize(raw, kv, minTS)), raw, kv, minTS)
	info, err := parseBatch(data)
	if err != nil {
		return err
	}
	ref := batchRef{data: data, base: kb.BaseOffset, maxTS: info.MaxTimestamp, epoch: uint64(uint32(kb.LeaderEpoch)), count: int32(info.Count)}
	files := l.files
	l.files = nil // the batch is in its file already
	l.add(ref, &info)
	l.files = files
	if info.ProducerID != 0 {
		l.remember(info.ProducerID, info.BaseSeq, info.Count, ref.base)
	}
	return nil
}

// maxBatchRecordsHint caps the records batchFromKafka makes room for
// before reading them: a damaged count must not allocate.
const maxBatchRecordsHint = 1 << 12

// batchFromKafka turns a Kafka batch (uncompressed, as this package
// writes them) back into a Batch: timestamps to nanoseconds, the message
// id out of its header. It returns the batch's leader epoch too.
func batchFromKafka(p []byte) (Batch, uint64, error) {
	kb, err := ParseKafkaBatch(p)
	if err != nil {
		return Batch{}, 0, err
	}
	if kb.Attributes&7 != 0 {
		return Batch{}, 0, fmt.Errorf("%w: a compressed batch at offset %d", ErrCorrupt, kb.BaseOffset)
	}
	b := Batch{Records: make([]Record, 0, max(min(kb.Count, maxBatchRecordsHint), 0))}
	if kb.ProducerID >= 0 {
		b.ProducerID, b.BaseSeq = kb.ProducerID, kb.BaseSequence
	}
	recs := p[KafkaBatchHeaderLen:kb.Size()]
	prev := int64(-1)
	for i := int32(0); i < kb.Count; i++ {
		r, rest, ok := readKafkaRecord(recs)
		// Offset deltas increase; compaction may leave gaps between them.
		if !ok || r.offsetDelta <= prev || kb.BaseOffset+r.offsetDelta > kb.LastOffset {
			return Batch{}, 0, fmt.Errorf("%w: record %d of the batch at offset %d", ErrCorrupt, i, kb.BaseOffset)
		}
		prev = r.offsetDelta
		recs = rest
		rec := Record{Offset: kb.BaseOffset + r.offsetDelta, Timestamp: (kb.FirstTimestamp + r.tsDelta) * 1e6, Key: r.key, Value: r.value}
		for _, h := range r.headers {
			if h.Key == MsgIDHeader && rec.MsgID == "" {
				rec.MsgID = string(h.Value)
				continue
			}
			rec.Headers = append(rec.Headers, Header{Key: h.Key, Value: bytes.Clone(h.Value)})
		}
		b.Records = append(b.Records, rec)
	}
	return b, uint64(uint32(kb.LeaderEpoch)), nil
}

// Torn describes a batch TearLastWrite cut in the middle.
type Torn struct {
	Segment    int64 // base offset of the segment
	BaseOffset int64 // the torn batch's offsets
	LastOffset int64
	Kept       int64 // bytes of it left in the file
	Size       int64 // bytes it had
}

// TearLastWrite cuts the last batch of the newest segment in dir in the
// middle, as a crash during its write would leave it: the first half of
// its bytes stay. ok is false when there is no batch to tear. The log
// must not be attached to dir (its node is down).
func TearLastWrite(dir string) (t Torn, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Torn{}, false, nil
	}
	last := ""
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), LogSuffix) {
			last = e.Name() // ReadDir sorts by name: 20-digit names by base offset
		}
	}
	if last == "" {
		return Torn{}, false, nil
	}
	path := filepath.Join(dir, last)
	data, err := os.ReadFile(path)
	if err != nil {
		return Torn{}, false, err
	}
	materializePins(path, false)
	pos, found := int64(0), false
	var kb KafkaBatch
	for pos < int64(len(data)) {
		b, err := ParseKafkaBatch(data[pos:])
		if err != nil {
			break
		}
		if pos+b.Size() == int64(len(data)) {
			kb, found = b, true
			break
		}
		pos += b.Size()
	}
	if !found {
		return Torn{}, false, nil
	}
	t = Torn{BaseOffset: kb.BaseOffset, LastOffset: kb.LastOffset, Size: kb.Size(), Kept: kb.Size() / 2}
	t.Segment, _ = strconv.ParseInt(strings.TrimSuffix(last, LogSuffix), 10, 64)
	if err := os.Truncate(path, pos+t.Kept); err != nil {
		return Torn{}, false, err
	}
	return t, true, nil
}

// wantIndexes is what a closed segment's .index and .timeindex hold when
// they are intact.
type wantIndexes struct {
	base             int64
	index, timeindex []byte
}

// segmentIndexes computes the index files of a closed segment whose .log
// holds data (whole batches), as the writer made them: the same entries
// at the same interval, and the closing time index entry.
func segmentIndexes(base int64, data []byte, interval int64) wantIndexes {
	lf := &logFiles{interval: interval}
	f := &segmentFiles{base: base, maxTS: math.MinInt64, lastTI: math.MinInt64}
	for pos := int64(0); pos < int64(len(data)); {
		kb, err := ParseKafkaBatch(data[pos:])
		if err != nil {
			break
		}
		lf.track(f, kb.LastOffset-base, kb.MaxTimestamp, pos, kb.Size())
		pos += kb.Size()
	}
	lf.timeEntry(f)
	return wantIndexes{base: base, index: f.pendingIndex, timeindex: f.pendingTime}
}

// repair compares the segment's index files in dir with what they should
// hold and writes again each one that differs, saying what was wrong.
func (w wantIndexes) repair(dir string) ([]IndexRebuild, error) {
	var out []IndexRebuild
	for _, file := range [...]struct {
		suffix string
		want   []byte
		size   int
	}{{IndexSuffix, w.index, IndexEntrySize}, {TimeIndexSuffix, w.timeindex, TimeIndexEntrySize}} {
		path := filepath.Join(dir, SegmentFileName(w.base, file.suffix))
		got, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			return out, err
		}
		problem := indexProblem(got, err == nil, file.want, file.size, file.suffix)
		if problem == "" {
			continue
		}
		if len(file.want) == 0 {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, file.want, 0o644)
		}
		if err != nil {
			return out, err
		}
		out = append(out, IndexRebuild{Segment: w.base, File: filepath.Base(path), Problem: problem})
	}
	return out, nil
}

// indexProblem says how an index file's bytes got (exists: the file is
// there) differ from want, "" when they do not.
func indexProblem(got []byte, exists bool, want []byte, size int, suffix string) string {
	n := len(want) / size
	switch {
	case bytes.Equal(got, want) && (exists || len(want) == 0):
		return ""
	case !exists:
		return fmt.Sprintf("it was missing (the .log gives %s)", plural(n, "entry", "entries"))
	case len(got)%size != 0:
		return fmt.Sprintf("it was %s long, not a whole number of %d-byte entries (the .log gives %s)", plural(len(got), "byte", "bytes"), size, plural(n, "entry", "entries"))
	case len(want) == 0:
		return fmt.Sprintf("it held %s, but a segment this small has none", plural(len(got)/size, "entry", "entries"))
	}
	for i := 0; i < min(len(got), len(want)); i += size {
		if !bytes.Equal(got[i:i+size], want[i:i+size]) {
			return fmt.Sprintf("entry %d of %d was %s; the .log gives %s", i/size+1, len(got)/size, indexEntryText(got[i:i+size], suffix), indexEntryText(want[i:i+size], suffix))
		}
	}
	return fmt.Sprintf("it held %s; the .log gives %s", plural(len(got)/size, "entry", "entries"), plural(n, "entry", "entries"))
}

// indexEntryText describes one index entry: offset and byte position, or
// timestamp and offset, both relative offsets as the file holds them.
func indexEntryText(e []byte, suffix string) string {
	be := binary.BigEndian
	if suffix == IndexSuffix {
		return fmt.Sprintf("(offset +%d, byte %d)", int32(be.Uint32(e)), int32(be.Uint32(e[4:])))
	}
	return fmt.Sprintf("(time %d ms, offset +%d)", int64(be.Uint64(e)), int32(be.Uint32(e[8:])))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
