package partlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A log with a folder keeps its data in its files, as Kafka does: once a
// segment closes, whole in its .log file, the batches' bytes leave the
// heap and the segment keeps only what its indexes need (offsets,
// timestamps, where each batch is in the file). A read of such a batch
// reads it back from the file with one pread: the lab's records are
// decoded straight from Kafka's format (decodeLabFromFile), anything
// else, and whatever needs the bytes themselves (a snapshot, a
// compaction pass), turns it back into the batch encoding the log had
// (dataFromFile). The last few batches read, and the last file, are
// kept, for a consumer reading forward. The active segment keeps its
// bytes: it is where appends, the acks=1 path and most reads are.
//
// Only a batch whose file form turns back into exactly the bytes it was
// appended as leaves memory (fromFile): records whose timestamps are
// whole milliseconds, as Kafka's are, and a Kafka client's uncompressed
// batch. Any other stays in memory, so reading a log never depends on
// whether a segment has closed.
//
// A snapshot of such a log (Snapshot) holds the closed segments by where
// they are in their files, and reads them when it is written out or
// read. Until then the files must not change under it: before a log
// removes or rewrites a segment file a live snapshot still reads
// (retention, compaction, a folder attached afresh, recovery cutting a
// tail), it reads that snapshot's batches into the snapshot's memory
// (materializePins).

// evict lets the bytes of closed segment s go from memory where its file
// holds them. The segment gets a new batch slice, since a snapshot taken
// while it was active may share the old one.
func (l *Log) evict(s *segment) {
	if l.files == nil || l.files.err != nil {
		return
	}
	dropBytes(s)
}

// dropBytes is evict for a segment whose file is known to hold it whole.
func dropBytes(s *segment) {
	if !s.closed {
		return
	}
	var nb []batchRef
	for j := range s.batches {
		b := &s.batches[j]
		if b.data == nil || !b.fromFile || b.fileLen == 0 {
			continue
		}
		if nb == nil {
			nb = slices.Clone(s.batches)
		}
		nb[j].data = nil
	}
	if nb != nil {
		s.batches = nb
	}
}

// recordsFromFile reports whether a batch of the lab's encoding, with
// header h and records recs, comes back from its Kafka form exactly: its
// timestamps are whole milliseconds (the file keeps milliseconds), its
// producer id survives as Kafka writes one, and no record has a header
// of the name the message id travels in.
func recordsFromFile(h *BatchHeader, recs []Record) bool {
	if h.ProducerID < 0 || (h.ProducerID == 0 && h.BaseSeq != 0) {
		return false
	}
	for i := range recs {
		r := &recs[i]
		if r.Timestamp%1e6 != 0 {
			return false
		}
		for _, hd := range r.Headers {
			if hd.Key == MsgIDHeader {
				return false
			}
		}
	}
	return true
}

// wireFromFile reports whether data, a Kafka client's batch raw behind
// its envelope, comes back from its file exactly: it must be uncompressed
// (reading a compressed one back would mean decompressing it) and its
// envelope what wireInfo finds in it.
func wireFromFile(data, raw []byte) bool {
	if len(raw) < KafkaBatchHeaderLen || raw[22]&kafkaCodecMask != 0 {
		return false
	}
	_, _, kv, minTS, err := parseWire(data)
	if err != nil {
		return false
	}
	kv2, minTS2, err := wireInfo(raw)
	return err == nil && kv == kv2 && minTS == minTS2
}

// dataFromFile turns raw, a batch of a segment file, back into the batch
// encoding of kind it was appended as (see fromFile).
func dataFromFile(raw []byte, kind byte) ([]byte, error) {
	kb, err := ParseKafkaBatch(raw)
	if err != nil {
		return nil, err
	}
	if !kb.CRCValid {
		return nil, fmt.Errorf("%w: the batch at offset %d fails its CRC", ErrCorrupt, kb.BaseOffset)
	}
	raw = raw[:kb.Size()]
	switch kind {
	case batchVersionKafka, batchVersionLab:
		kv, minTS, err := wireInfo(raw)
		if err != nil {
			return nil, err
		}
		return appendEnvelope(make([]byte, 0, WireBatchSize(raw, kv, minTS)), kind, raw, kv, minTS), nil
	case batchVersion, batchVersionHeaders:
		if out, ok := encodeFromKafka(raw, &kb); ok {
			return out, nil
		}
		b, _, err := batchFromKafka(raw)
		if err != nil {
			return nil, err
		}
		return EncodeBatch(b), nil
	case batchVersionCompacted, batchVersionCompactedHeaders, batchVersionCompactedKafka, batchVersionCompactedKafkaHeaders:
		b, _, err := batchFromKafka(raw)
		if err != nil {
			return nil, err
		}
		span := kb.LastOffset - kb.BaseOffset + 1
		kafka := kind == batchVersionCompactedKafka || kind == batchVersionCompactedKafkaHeaders
		return encodeCompacted(b.Records, kb.BaseOffset, int32(span), b.ProducerID, b.BaseSeq, kafka), nil
	}
	return nil, fmt.Errorf("%w: batch encoding %d", ErrCorrupt, kind)
}

// fromRaw is dataFromFile for stored batch b, checking that raw is the
// batch b says is there: its base offset, and the length it had.
func fromRaw(raw []byte, b *batchRef) ([]byte, error) {
	if int64(len(raw)) < int64(b.fileLen) {
		return nil, fmt.Errorf("%w: the batch at offset %d is cut short in its file", ErrCorrupt, b.base)
	}
	raw = raw[:b.fileLen]
	data, err := dataFromFile(raw, b.kind)
	switch {
	case err != nil:
		return nil, err
	case int64(binary.BigEndian.Uint64(raw)) != b.base || len(data) != int(b.dataLen):
		return nil, fmt.Errorf("%w: the file no longer holds the batch at offset %d where it was written", ErrCorrupt, b.base)
	}
	return data, nil
}

// segmentPath is the .log file of the segment with base offset base.
func (l *Log) segmentPath(base int64) string {
	return filepath.Join(l.fileDir, SegmentFileName(base, LogSuffix))
}

// batchData returns the bytes of batch b of segment s: its own, or read
// back from its file.
func (l *Log) batchData(s *segment, b *batchRef) ([]byte, error) {
	if b.data != nil {
		return b.data, nil
	}
	if d := l.cache.get(s, b.filePos, false); d != nil {
		return d, nil
	}
	raw := make([]byte, b.fileLen)
	err := l.cache.readAt(l.segmentPath(s.base), s, raw, b.filePos)
	var d []byte
	if err == nil {
		d, err = fromRaw(raw, b)
	}
	if err != nil {
		return nil, fmt.Errorf("offset %d from its segment file: %w", b.base, err)
	}
	l.cache.put(s, b.filePos, false, d)
	return d, nil
}

// rawBatch returns batch b of segment s as its file holds it, checked:
// for reading records straight from it (decodeLabFromFile).
func (l *Log) rawBatch(s *segment, b *batchRef) ([]byte, *KafkaBatch, error) {
	raw := l.cache.get(s, b.filePos, true)
	if raw == nil {
		raw = make([]byte, b.fileLen)
		if err := l.cache.readAt(l.segmentPath(s.base), s, raw, b.filePos); err != nil {
			return nil, nil, fmt.Errorf("offset %d from its segment file: %w", b.base, err)
		}
	}
	kb, err := ParseKafkaBatch(raw)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("offset %d from its segment file: %w", b.base, err)
	case !kb.CRCValid || kb.BaseOffset != b.base || kb.Size() != int64(b.fileLen) || kb.Count != b.count:
		return nil, nil, fmt.Errorf("offset %d from its segment file: %w: the file no longer holds the batch where it was written", b.base, ErrCorrupt)
	}
	l.cache.put(s, b.filePos, true, raw)
	return raw, &kb, nil
}

// decodeLabFromFile is decodeRecords for raw, a batch of the lab's
// records as its segment file holds it (b's kind is 2, 3 or 9): the
// records are read from the file's form, sharing its bytes, with their
// message ids in one string, as decodeRecords gives them. ok is false
// for a batch it does not take, which the caller turns back instead.
func decodeLabFromFile(raw []byte, kb *KafkaBatch, b *batchRef, out []Record, skip, n int) (_ []Record, ok bool) {
	if kb.Attributes&kafkaCodecMask != 0 || kb.LastOffset-kb.BaseOffset+1 != int64(kb.Count) {
		return out, false
	}
	return decodeLabKafka(raw[KafkaBatchHeaderLen:kb.Size()], int(kb.Count), kb.FirstTimestamp, b.base, b.epoch, b.kind != batchVersion, out, skip, n)
}

// decodeLabKafka appends up to n of the records in body, the
// uncompressed records of a Kafka batch of the lab's (count of them,
// numbered from 0, firstTS its first timestamp in milliseconds), from
// the one at skip on, numbered from base and stamped with epoch; their
// message ids come from their id headers, in one string, and with
// headers their other headers are kept. ok is false for records that do
// not decode as a batch written in order.
func decodeLabKafka(body []byte, count int, firstTS, base int64, epoch uint64, headers bool, out []Record, skip, n int) (_ []Record, ok bool) {
	if skip >= count || n <= 0 {
		return out, true
	}
	last := count
	if n < count-skip {
		last = skip + n
	}
	// The ids of the records returned, in one string.
	var idBytes []byte
	p := body
	for i := range last {
		r, rest, ok := readKafkaRecordNoHeaders(p)
		if !ok || r.offsetDelta != int64(i) {
			return out, false
		}
		p = rest
		if i >= skip {
			id, _, _ := r.msgIDAndHeaders()
			idBytes = append(idBytes, id...)
		}
	}
	ids, idPos := string(idBytes), 0
	p = body
	for i := range last {
		r, rest, _ := readKafkaRecordNoHeaders(p)
		p = rest
		if i < skip {
			continue
		}
		id, _, nh := r.msgIDAndHeaders()
		rec := Record{Offset: base + int64(i), Epoch: epoch, Timestamp: (firstTS + r.tsDelta) * 1e6,
			Key: r.key, Value: r.value, MsgID: ids[idPos : idPos+len(id)]}
		idPos += len(id)
		if headers && nh > 0 {
			rec.Headers = make([]Header, 0, nh)
			r.eachHeader(func(k, v []byte) { rec.Headers = append(rec.Headers, Header{Key: string(k), Value: v}) })
		}
		out = append(out, rec)
	}
	return out, true
}

// segmentData returns the bytes of every batch of s, reading its file
// once if any is only there.
func (l *Log) segmentData(s *segment) ([][]byte, error) {
	return batchesData(l.segmentPath(s.base), s.batches, nil)
}

// batchesData returns the bytes of every batch of batches, a segment's,
// taking those kept nowhere else from have (when not nil) or from the
// segment file at path, read once.
func batchesData(path string, batches []batchRef, have [][]byte) ([][]byte, error) {
	out := make([][]byte, len(batches))
	var file []byte
	for j := range batches {
		b := &batches[j]
		switch {
		case b.data != nil:
			out[j] = b.data
			continue
		case have != nil && have[j] != nil:
			out[j] = have[j]
			continue
		}
		if file == nil {
			var err error
			if file, err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
		if b.filePos+int64(b.fileLen) > int64(len(file)) {
			return nil, fmt.Errorf("%w: %s ends before the batch at offset %d", ErrCorrupt, filepath.Base(path), b.base)
		}
		d, err := fromRaw(file[b.filePos:], b)
		if err != nil {
			return nil, err
		}
		out[j] = d
	}
	return out, nil
}

// closedData is segmentData for each of segs.
func (l *Log) closedData(segs []*segment) ([][][]byte, error) {
	out := make([][][]byte, len(segs))
	for i, s := range segs {
		d, err := l.segmentData(s)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// loadEvicted brings every batch kept only in a file back into memory,
// for a log about to lose those files.
func (l *Log) loadEvicted() error {
	for _, s := range l.segs {
		if !slices.ContainsFunc(s.batches, func(b batchRef) bool { return b.data == nil }) {
			continue
		}
		d, err := l.segmentData(s)
		if err != nil {
			return err
		}
		nb := slices.Clone(s.batches)
		for j := range nb {
			nb[j].data = d[j]
		}
		s.batches = nb
	}
	l.cache.reset()
	return nil
}

// batchCache keeps the last few batches a log read back from its files,
// and the segment file it read last, open.
type batchCache struct {
	mu      sync.Mutex
	ents    [cachedBatches]cacheEntry
	next    int
	file    *os.File
	fileSeg *segment // whose file is open
}

// readAt reads p from the file at path, segment s's, at pos, keeping the
// file open for the next read of the same segment.
func (c *batchCache) readAt(path string, s *segment, p []byte, pos int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fileSeg != s || c.file == nil {
		c.closeFile()
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		c.file, c.fileSeg = f, s
	}
	if _, err := c.file.ReadAt(p, pos); err != nil {
		c.closeFile()
		return fmt.Errorf("read %s at %d: %w", filepath.Base(path), pos, err)
	}
	return nil
}

func (c *batchCache) closeFile() {
	if c.file != nil {
		c.file.Close()
	}
	c.file, c.fileSeg = nil, nil
}

type cacheEntry struct {
	seg  *segment
	pos  int64
	raw  bool // data is the batch as its file holds it, not turned back
	data []byte
}

// cachedBatches is how many batches read back a log keeps: enough for a
// few consumers reading forward, about 100 KB with batches of 100 records.
const cachedBatches = 8

func (c *batchCache) get(s *segment, pos int64, raw bool) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.ents {
		if e := &c.ents[i]; e.seg == s && e.pos == pos && e.raw == raw && e.data != nil {
			return e.data
		}
	}
	return nil
}

func (c *batchCache) put(s *segment, pos int64, raw bool, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.ents {
		if e := &c.ents[i]; e.seg == s && e.pos == pos && e.raw == raw {
			return // there already
		}
	}
	c.ents[c.next] = cacheEntry{seg: s, pos: pos, raw: raw, data: data}
	c.next = (c.next + 1) % cachedBatches
}

func (c *batchCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ents = [cachedBatches]cacheEntry{}
	c.closeFile()
}

// ReadLogToDir is ReadLog for a log that is to write its files in dir:
// each segment read goes to the files at once, and a closed one's
// batches then leave memory, so a large snapshot is never held whole.
// The files are written to dir+RestoringSuffix, leaving dir to the log
// that may be using it still; MoveDir puts them in dir. fault is as
// SetWriteFault's. A log whose files failed on the way holds in memory
// what they do not (see FilesErr).
func ReadLogToDir(r io.Reader, dir string, fault func() error) (*Log, error) {
	tmp := filepath.Clean(dir) + RestoringSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("log folder %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("log folder %s: %w", tmp, err)
	}
	lf := &logFiles{dir: tmp, fault: fault}
	var active *segment // its files stay open
	l, err := readLog(r, true, func(l *Log, seg *segment, last bool) {
		lf.interval = int64(l.cfg.IndexIntervalBytes)
		lf.open(seg)
		if last {
			active = seg
		}
		for j := range seg.batches {
			lf.append(seg, &seg.batches[j])
		}
		if !last {
			lf.closeSegment(seg)
			if lf.err == nil {
				dropBytes(seg)
			}
		}
	})
	if err != nil {
		if active != nil && active.files != nil {
			closeFiles(active.files)
		}
		os.RemoveAll(tmp)
		return nil, err
	}
	l.files, l.fileDir, l.fault = lf, tmp, fault
	return l, nil
}

// MoveDir puts the files of a log ReadLogToDir read in dir, in place of
// whatever dir held, and the log writes there from then on. Should the
// move fail, the log writes dir afresh (AttachDir).
func (l *Log) MoveDir(dir string) error {
	l.mu.Lock()
	if l.files == nil || !strings.HasSuffix(l.files.dir, RestoringSuffix) {
		l.mu.Unlock()
		return l.AttachDir(dir)
	}
	from := l.files.dir
	materializePins(dir, true)
	err := os.RemoveAll(dir)
	if err == nil {
		err = os.Rename(from, dir)
	}
	if err == nil {
		l.files.dir, l.fileDir = dir, dir
		l.cache.reset()
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	// The open files still write to from: take what they hold back into
	// memory, then write dir afresh.
	aerr := l.AttachDir(dir)
	os.RemoveAll(from)
	return aerr
}
