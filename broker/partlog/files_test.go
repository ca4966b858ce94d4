package partlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fileBatch is one batch read back from a .log file.
type fileBatch struct {
	pos     int64
	kb      kmsg.RecordBatch
	records []kmsg.Record
}

// readLogFile decodes a .log file with franz-go's decoder and checks every
// batch's CRC.
func readLogFile(t *testing.T, path string) []fileBatch {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fileBatch
	pos := int64(0)
	for len(data) > 0 {
		info, err := ParseKafkaBatch(data)
		if err != nil {
			t.Fatalf("%s at byte %d: %v", filepath.Base(path), pos, err)
		}
		if !info.CRCValid {
			t.Fatalf("%s at byte %d: CRC does not match", filepath.Base(path), pos)
		}
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(data[:info.Size()]); err != nil {
			t.Fatalf("%s at byte %d: kmsg: %v", filepath.Base(path), pos, err)
		}
		fb := fileBatch{pos: pos, kb: kb}
		recs := kb.Records
		for range kb.NumRecords {
			l, n := binary.Varint(recs)
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(l)]); err != nil {
				t.Fatalf("record: %v", err)
			}
			fb.records = append(fb.records, r)
			recs = recs[n+int(l):]
		}
		out = append(out, fb)
		data = data[info.Size():]
		pos += info.Size()
	}
	return out
}

func segmentBases(t *testing.T, dir string) []int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, e := range ents {
		if filepath.Ext(e.Name()) != LogSuffix {
			continue
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(e.Name(), LogSuffix), 10, 64)
		if err != nil || SegmentFileName(base, LogSuffix) != e.Name() {
			t.Fatalf("segment file %q is not named by a 20-digit base offset", e.Name())
		}
		bases = append(bases, base)
	}
	slices.Sort(bases)
	return bases
}

func TestFilesHoldKafkaBatches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l := newLog(t, Config{SegmentRecords: 8, IndexIntervalBytes: 100})
	// Appended before the folder is attached: attaching writes them out.
	mustAppend(t, l, Batch{Records: recs("a", 3, 20, 1e18)}, 1)
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, Batch{ProducerID: 7, BaseSeq: 0, Records: recs("b", 4, 20, 1e18+5e9)}, 2)
	appendEach(t, l, recs("c", 6, 20, 1e18+10e9), 2) // rolls at offset 7 (3+4 = 7, then 8 is full)
	if err := l.SyncFiles(); err != nil {
		t.Fatal(err)
	}

	bases := segmentBases(t, dir)
	var want []int64
	for _, s := range l.Segments() {
		want = append(want, s.BaseOffset)
	}
	if !slices.Equal(bases, want) {
		t.Fatalf("segment files %v, want the log's segments %v", bases, want)
	}

	all := readAll(t, l)
	next, entries := int64(0), 0
	for _, base := range bases {
		batches := readLogFile(t, filepath.Join(dir, SegmentFileName(base, LogSuffix)))
		for _, b := range batches {
			if b.kb.FirstOffset != next {
				t.Fatalf("segment %d: batch at offset %d, want %d (contiguous)", base, b.kb.FirstOffset, next)
			}
			for i, r := range b.records {
				orig := all[next+int64(i)]
				if !bytes.Equal(r.Key, orig.Key) || !bytes.Equal(r.Value, orig.Value) ||
					b.kb.FirstTimestamp+r.TimestampDelta64 != orig.Timestamp/1e6 || int64(r.OffsetDelta) != int64(i) {
					t.Fatalf("offset %d in the file differs from the log", next+int64(i))
				}
				if len(r.Headers) != 1 || r.Headers[0].Key != MsgIDHeader || string(r.Headers[0].Value) != orig.MsgID {
					t.Fatalf("offset %d: headers %+v, want the message id %q", next+int64(i), r.Headers, orig.MsgID)
				}
			}
			if uint64(b.kb.PartitionLeaderEpoch) != all[next].Epoch {
				t.Fatalf("batch %d: leader epoch %d, want %d", next, b.kb.PartitionLeaderEpoch, all[next].Epoch)
			}
			next += int64(b.kb.NumRecords)
		}
		entries += checkIndexes(t, dir, base, batches)
	}
	if entries < 4 {
		t.Fatalf("%d index entries in all; with 100-byte intervals there should be several", entries)
	}
	if next != l.EndOffset() {
		t.Fatalf("files hold offsets up to %d, the log %d", next, l.EndOffset())
	}
	// The idempotent batch keeps its producer id and sequence.
	b := readLogFile(t, filepath.Join(dir, SegmentFileName(0, LogSuffix)))[1]
	if b.kb.ProducerID != 7 || b.kb.FirstSequence != 0 {
		t.Fatalf("idempotent batch: producer %d seq %d", b.kb.ProducerID, b.kb.FirstSequence)
	}
}

// checkIndexes checks that every .index entry points at a batch start and
// names that batch's last offset, and every .timeindex entry names the
// last offset of the batch that first reached its timestamp, the largest
// so far.
func checkIndexes(t *testing.T, dir string, base int64, batches []fileBatch) (entries int) {
	t.Helper()
	// An index file appears with its first entry.
	idx, err := os.ReadFile(filepath.Join(dir, SegmentFileName(base, IndexSuffix)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(idx)%IndexEntrySize != 0 {
		t.Fatalf("segment %d: .index is %d bytes", base, len(idx))
	}
	for e := idx; len(e) > 0; e = e[IndexEntrySize:] {
		entries++
		rel, pos := int64(binary.BigEndian.Uint32(e)), int64(binary.BigEndian.Uint32(e[4:]))
		i := slices.IndexFunc(batches, func(b fileBatch) bool { return b.pos == pos })
		if i < 0 {
			t.Fatalf("segment %d: index entry (%d, %d) points at no batch start", base, rel, pos)
		}
		if last := batches[i].kb.FirstOffset + int64(batches[i].kb.LastOffsetDelta); last != base+rel {
			t.Fatalf("segment %d: index entry names offset %d, the batch at %d ends at %d", base, base+rel, pos, last)
		}
	}
	ti, err := os.ReadFile(filepath.Join(dir, SegmentFileName(base, TimeIndexSuffix)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(ti)%TimeIndexEntrySize != 0 {
		t.Fatalf("segment %d: .timeindex is %d bytes", base, len(ti))
	}
	prev := int64(-1 << 63)
	for e := ti; len(e) > 0; e = e[TimeIndexEntrySize:] {
		ts, rel := int64(binary.BigEndian.Uint64(e)), int64(binary.BigEndian.Uint32(e[8:]))
		if ts <= prev {
			t.Fatalf("segment %d: time index goes from %d to %d", base, prev, ts)
		}
		prev = ts
		maxSoFar := int64(-1 << 63)
		found := false
		for _, b := range batches {
			if b.kb.MaxTimestamp > maxSoFar {
				maxSoFar = b.kb.MaxTimestamp
				if maxSoFar == ts {
					found = b.kb.FirstOffset+int64(b.kb.LastOffsetDelta) == base+rel
					break
				}
			}
		}
		if !found {
			t.Fatalf("segment %d: time index entry (%d, %d) is not a batch reaching a new largest timestamp", base, ts, rel)
		}
		entries++
	}
	return entries
}

func TestFilesRollAndRetention(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, Config{SegmentRecords: 2, RetentionBytes: 1})
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	if got := segmentBases(t, dir); !slices.Equal(got, []int64{0}) {
		t.Fatalf("a new log has files %v, want the empty segment 0", got)
	}
	appendEach(t, l, recs("a", 5, 10, 0), 1)
	if got := segmentBases(t, dir); !slices.Equal(got, []int64{0, 2, 4}) {
		t.Fatalf("after 5 records in 2-record segments: %v", got)
	}
	// A closed segment gets its last time index entry on roll.
	if fi, err := os.Stat(filepath.Join(dir, SegmentFileName(0, TimeIndexSuffix))); err != nil || fi.Size() != TimeIndexEntrySize {
		t.Fatalf("closed segment's .timeindex: %v, %v", fi, err)
	}
	deleted := l.EnforceRetention(int64(time.Hour))
	if len(deleted) != 2 {
		t.Fatalf("retention deleted %d segments, want 2", len(deleted))
	}
	if got := segmentBases(t, dir); !slices.Equal(got, []int64{4}) {
		t.Fatalf("after retention: %v, want only the active segment 4", got)
	}
	l.DetachDir()
	appendEach(t, l, recs("b", 2, 10, 0), 1)
	if got := segmentBases(t, dir); !slices.Equal(got, []int64{4}) {
		t.Fatalf("a detached log wrote files: %v", got)
	}
}

func TestParseKafkaBatchFindsDamage(t *testing.T) {
	r := recs("a", 2, 5, 0)
	r[0].Offset, r[1].Offset = 10, 11
	b := AppendKafkaBatch(nil, r, 0, 0, 3)
	info, err := ParseKafkaBatch(b)
	if err != nil || !info.CRCValid || info.BaseOffset != 10 || info.LastOffset != 11 || info.LeaderEpoch != 3 || info.Size() != int64(len(b)) {
		t.Fatalf("good batch: %+v, %v", info, err)
	}
	// The base offset and epoch are outside the CRC.
	binary.BigEndian.PutUint64(b, 99)
	if info, _ := ParseKafkaBatch(b); !info.CRCValid {
		t.Fatal("changing the base offset broke the CRC")
	}
	b[len(b)-1] ^= 1
	if info, _ := ParseKafkaBatch(b); info.CRCValid {
		t.Fatal("a flipped record byte kept the CRC valid")
	}
	if _, err := ParseKafkaBatch(b[:len(b)-3]); err == nil {
		t.Fatal("a torn batch parsed")
	}
}

func TestDumpFileReadsWhatTheLogWrote(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, Config{SegmentRecords: 100, IndexIntervalBytes: 1})
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	r := recs("a", 3, 5, 1_700_000_000e9)
	r[0].Key = nil
	mustAppend(t, l, Batch{Records: r[:1]}, 4)
	mustAppend(t, l, Batch{Records: r[1:]}, 4)
	l.DetachDir()
	name := filepath.Join(dir, SegmentFileName(0, LogSuffix))
	data, _ := os.ReadFile(name)
	got, err := DumpFile(name, data, true)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"Dumping 00000000000000000000.log",
		"baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 4 position: 0 size: ",
		"baseOffset: 1 lastOffset: 2 count: 2 partitionLeaderEpoch: 4 position: ",
		"crcValid: true",
		"| offset: 2 CreateTime: 1700000002000 keySize: 4 valueSize: 5 key: a-k2 header: mqlab.msg-id=a:2 payload: cdefg",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("dump lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(got[3], "key:") {
		t.Errorf("a null key is shown: %s", got[3])
	}
	// A torn tail and a flipped byte are described, not fatal.
	data[len(data)-1] ^= 1
	got, _ = DumpFile(name, data[:len(data)-5], false)
	if last := got[len(got)-1]; !strings.Contains(last, "not a whole batch") {
		t.Errorf("torn tail: %q", last)
	}
	got, _ = DumpFile(name, data, false)
	if last := got[len(got)-1]; !strings.Contains(last, "crcValid: false") {
		t.Errorf("flipped byte: %q", last)
	}
	idx := filepath.Join(dir, SegmentFileName(0, IndexSuffix))
	data, _ = os.ReadFile(idx)
	if got, err := DumpFile(idx, data, false); err != nil || len(got) != 2 || !strings.HasPrefix(got[1], "offset: 2 position: ") {
		t.Errorf(".index dump: %q, %v", got, err)
	}
	if _, err := DumpFile("orders.txt", nil, false); err == nil || !strings.Contains(err.Error(), "20 digits") {
		t.Errorf("a file that is not a segment: %v", err)
	}
}

// segment.ms: a batch a minute newer than the segment's first starts a
// new segment, and its files.
func TestFilesRollByAge(t *testing.T) {
	dir := t.TempDir()
	l := newLog(t, Config{SegmentAge: time.Minute})
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	at := func(sec int64) Batch { return Batch{Records: recs("a", 1, 5, sec*1e9)} }
	for _, sec := range []int64{0, 30, 59, 60, 90, 200} {
		mustAppend(t, l, at(sec), 1)
	}
	// 0, 30, 59 | 60, 90 | 200
	if got := segmentBases(t, dir); !slices.Equal(got, []int64{0, 3, 5}) {
		t.Fatalf("segments %v, want 0, 3 and 5", got)
	}
	// A snapshot carries the limit: the restored log rolls alike.
	r, err := ReadLog(bytes.NewReader(snapshotBytes(t, l)))
	if err != nil || r.Config().SegmentAge != time.Minute {
		t.Fatalf("restored config %+v, %v", r.Config(), err)
	}
}

// A disk that fills up stops the files at the write that failed: what was
// written before stays whole, the log keeps every batch in memory, and
// recovery does not take the short files for the whole log.
func TestFilesStopWhenTheDiskIsFull(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{SegmentRecords: 1000}
	l := writeLog(t, dir, cfg, 3)
	if err := l.SyncFiles(); err != nil {
		t.Fatal(err)
	}
	full := false
	l.SetWriteFault(func() error {
		if full {
			return syscall.ENOSPC
		}
		return nil
	})
	full = true
	// A batch larger than the write buffer is written at once, and fails.
	big := Batch{Records: recs("big", 1, pendingMax+1, 1_800_000_000e9)}
	res := mustAppend(t, l, big, 9)
	if err := l.FilesErr(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("after a write to a full disk FilesErr is %v; want ENOSPC", err)
	}
	if res.BaseOffset != 9 || l.EndOffset() != 10 {
		t.Fatalf("the log after the failed write: batch at %d, end %d; want 9 and 10 (it goes on in memory)", res.BaseOffset, l.EndOffset())
	}
	l.NoteApplied(99)
	l.DetachDir()
	path := filepath.Join(dir, SegmentFileName(0, LogSuffix))
	var offsets []int64
	for _, b := range readLogFile(t, path) {
		for _, r := range b.records {
			offsets = append(offsets, b.kb.FirstOffset+int64(r.OffsetDelta))
		}
	}
	if !slices.Equal(offsets, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("the file holds offsets %v; want the 9 written before the disk filled", offsets)
	}
	if _, rec, err := Recover(cfg, dir); err != nil || rec.Found {
		t.Fatalf("recovery after the disk filled: %+v, %v; want the files refused, to be rebuilt from raft", rec, err)
	}
}
