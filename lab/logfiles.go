package lab

// The log commands: a replica's segment files as they are on disk, and
// one of them printed as Kafka's kafka-dump-log prints it.

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/lab/command"
)

func (r *run) logFiles(c command.LogFiles) error {
	p, err := r.w.partition(c.Partition.Name, c.Partition.Partition)
	if err != nil {
		return fmt.Errorf("log files: %w", err)
	}
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("log files: %w", err)
	}
	var hosts []string
	for _, rep := range p.Replicas {
		hosts = append(hosts, rep.Node)
	}
	tp := broker.TopicPartition{Topic: c.Partition.Name, Partition: c.Partition.Partition}
	if !slices.Contains(hosts, id) {
		return fmt.Errorf("log files: %s holds no replica of %s; its replicas are on %s", id, tp, strings.Join(hosts, ", "))
	}
	dir := r.w.cluster.Files().PartitionDir(id, tp)
	if dir == "" {
		return fmt.Errorf("log files: this lab keeps its logs in memory only")
	}
	if err := r.w.cluster.Files().Sync(); err != nil {
		return fmt.Errorf("log files: %w", err)
	}
	rel, _ := filepath.Rel(r.l.logDir, dir)
	lines, err := segmentListing(dir)
	if err != nil {
		return fmt.Errorf("log files %s on %s: %w", tp, id, err)
	}
	r.begin(c.String())
	r.say(EventOutcome, "%s's copy of %s: %s/ in %s", id, tp, filepath.ToSlash(rel), r.l.logDir)
	for _, line := range lines {
		r.say(EventOutcome, "%s", line)
	}
	return nil
}

// segmentListing describes each segment in dir: its three files' sizes,
// and the offsets and batches its .log holds.
func segmentListing(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	var logs []string
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			sizes[e.Name()] = fi.Size()
		}
		if strings.HasSuffix(e.Name(), partlog.LogSuffix) {
			logs = append(logs, e.Name())
		}
	}
	if len(logs) == 0 {
		return []string{"no segment files"}, nil
	}
	var out []string
	for i, name := range logs {
		stem := strings.TrimSuffix(name, partlog.LogSuffix)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		batches, first, last := 0, int64(-1), int64(-1)
		for len(data) > 0 {
			b, err := partlog.ParseKafkaBatch(data)
			if err != nil {
				break
			}
			if batches == 0 {
				first = b.BaseOffset
			}
			batches, last, data = batches+1, b.LastOffset, data[b.Size():]
		}
		what := "empty"
		if batches > 0 {
			what = fmt.Sprintf("offsets %s–%s, %s", commas(first), commas(last), plural(batches, "batch", "batches"))
		}
		if i == len(logs)-1 {
			what += ", active"
		}
		row := func(name, what string) string {
			return fmt.Sprintf("%-30s %7s B  %s", name, commas(sizes[name]), what)
		}
		index := func(name string, entry int64) string {
			if _, ok := sizes[name]; !ok {
				none := "no entry, so no file"
				if i == len(logs)-1 {
					none = "no entry yet, so no file yet"
				}
				return fmt.Sprintf("%-30s %9s  %s", name, "", none)
			}
			return row(name, plural(int(sizes[name]/entry), "entry", "entries"))
		}
		out = append(out, row(name, what),
			index(stem+partlog.IndexSuffix, partlog.IndexEntrySize),
			index(stem+partlog.TimeIndexSuffix, partlog.TimeIndexEntrySize))
	}
	return out, nil
}

func (r *run) logDump(c command.LogDump) error {
	path := filepath.Join(r.l.logDir, filepath.FromSlash(c.File))
	if err := r.w.cluster.Files().Sync(); err != nil {
		return fmt.Errorf("log dump: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("log dump: %s is a folder; name one of its segment files, as log files lists them", c.File)
	}
	if _, err := partlog.DumpFile(path, nil, false); err != nil { // the name alone says whether it is a segment file
		return fmt.Errorf("log dump: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("log dump: no file %s in the lab's log folder; log files PARTITION on NODE lists them", c.File)
		}
		return fmt.Errorf("log dump: %w", err)
	}
	lines, err := partlog.DumpFile(path, data, c.Records)
	if err != nil {
		return fmt.Errorf("log dump: %w", err)
	}
	// Like sql, what a look into the files found goes on the timeline, so
	// a lesson that runs it shows it and a transcript keeps it.
	r.begin(c.String())
	for _, line := range lines {
		r.say(EventOutcome, "%s", line)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%s %s", commas(int64(n)), many)
}

// commas writes n with thousands separated: 1,500.
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// segmentValue reads segment(P@n2, OFFSET) and position(P@n2, OFFSET) from
// the replica's files, as a fetch finds a record: the segment whose base
// offset is the largest at or below OFFSET, the last entry of its .index
// at or before OFFSET, then batch headers forward from that byte until
// the batch that holds OFFSET. Without @ the leader's files are read.
func (rd *reader) segmentValue(v command.Value, p broker.PartitionState) (any, error) {
	node, rs, err := replicaUp(v, p)
	if err != nil {
		return nil, err
	}
	if v.At < rs.LogStart || v.At >= rs.HighWatermark {
		return nil, notNow(fmt.Errorf("%s: %s's files hold offsets %d to %d, not %d", v, node, rs.LogStart, rs.HighWatermark-1, v.At))
	}
	files := rd.r.w.cluster.Files()
	dir := files.PartitionDir(node, broker.TopicPartition{Topic: v.Target.Name, Partition: v.Target.Partition})
	if dir == "" {
		return nil, fmt.Errorf("%s: this lab keeps its logs in memory only", v)
	}
	if err := files.Sync(); err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	base, pos, err := findInFiles(dir, v.At)
	if err != nil {
		return nil, notNow(fmt.Errorf("%s: %w", v, err))
	}
	if v.Func == "segment" {
		return float64(base), nil
	}
	return float64(pos), nil
}

// findInFiles finds offset in the segment files of dir: the base offset of
// the segment that holds it, and the byte position in that segment's .log
// of the batch that holds it.
func findInFiles(dir string, offset int64) (base, pos int64, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, err
	}
	base = -1
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), partlog.LogSuffix)
		if !ok {
			continue
		}
		if b, err := strconv.ParseInt(stem, 10, 64); err == nil && b <= offset && b > base {
			base = b
		}
	}
	if base < 0 {
		return 0, 0, fmt.Errorf("no segment file holds offset %d", offset)
	}
	// The index: 8-byte entries of a 4-byte offset relative to the base and
	// a 4-byte position, in offset order. A missing index (a segment too
	// small for an entry) means reading from the segment's first byte.
	index, err := os.ReadFile(filepath.Join(dir, partlog.SegmentFileName(base, partlog.IndexSuffix)))
	if err != nil && !os.IsNotExist(err) {
		return 0, 0, err
	}
	for i := 0; i+partlog.IndexEntrySize <= len(index); i += partlog.IndexEntrySize {
		rel, at := binary.BigEndian.Uint32(index[i:]), binary.BigEndian.Uint32(index[i+4:])
		if base+int64(rel) > offset {
			break
		}
		pos = int64(at)
	}
	data, err := os.ReadFile(filepath.Join(dir, partlog.SegmentFileName(base, partlog.LogSuffix)))
	if err != nil {
		return 0, 0, err
	}
	for pos < int64(len(data)) {
		b, err := partlog.ParseKafkaBatch(data[pos:])
		if err != nil {
			return 0, 0, fmt.Errorf("%s at byte %d: %w", partlog.SegmentFileName(base, partlog.LogSuffix), pos, err)
		}
		if b.LastOffset >= offset {
			return base, pos, nil
		}
		pos += int64(b.Size())
	}
	return 0, 0, fmt.Errorf("%s ends before offset %d", partlog.SegmentFileName(base, partlog.LogSuffix), offset)
}
