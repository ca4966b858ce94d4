package lab

// The log commands: a replica's segment files as they are on disk, and
// one of them printed as Kafka's kafka-dump-log prints it.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	r.lines = append(r.lines, fmt.Sprintf("%s's copy of %s: %s/ in %s", id, tp, filepath.ToSlash(rel), r.l.logDir))
	r.lines = append(r.lines, lines...)
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
	r.lines = append(r.lines, lines...)
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
