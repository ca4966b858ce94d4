package broker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
)

// fileOffsets reads a replica's segment files and returns the offsets of
// their records in file order, failing on a damaged batch.
func fileOffsets(t *testing.T, c *Cluster, dir string) (offsets []int64, segments int) {
	t.Helper()
	if err := c.Files().Sync(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	for _, e := range ents { // ReadDir sorts by name: 20-digit names sort by base offset
		if !strings.HasSuffix(e.Name(), partlog.LogSuffix) {
			continue
		}
		segments++
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for len(data) > 0 {
			b, err := partlog.ParseKafkaBatch(data)
			if err != nil || !b.CRCValid {
				t.Fatalf("%s: batch %+v: %v", e.Name(), b, err)
			}
			for o := b.BaseOffset; o <= b.LastOffset; o++ {
				offsets = append(offsets, o)
			}
			data = data[b.Size():]
		}
	}
	return offsets, segments
}

func applied(c *Cluster, node string, tp TopicPartition) int64 {
	rep := c.replicaOn(node, tp.String())
	if rep == nil || rep.partition() == nil {
		return -1
	}
	_, hwm, _ := rep.partition().state()
	return hwm
}

// Every replica writes its partition's segment files in its node's folder;
// a killed node keeps them, and a restarted one holds the whole log again.
func TestReplicaFilesFollowTheLog(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "n3", "old-0")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := NewCluster(Config{Nodes: 3, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a new cluster left an old node folder's contents: %v", err)
	}
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1, SegmentRecords: 4})
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, BatchSize: 1})
	produce := func(from, to int) {
		t.Helper()
		var msgs []Message
		for i := from; i < to; i++ {
			msgs = append(msgs, msg("orders", "k", i))
		}
		for _, r := range p.Produce(ctxFor(t, 10*time.Second), msgs...) {
			if r.Outcome != OutcomeAcked {
				t.Fatalf("produce: %v", r.Err)
			}
		}
	}
	want := func(n int) []int64 {
		var out []int64
		for i := range n {
			out = append(out, int64(i))
		}
		return out
	}
	produce(0, 10)
	for _, node := range c.Nodes() {
		waitFor(t, 10*time.Second, node+" to apply 10 records", func() bool { return applied(c, node, tp) == 10 })
		got, segs := fileOffsets(t, c, c.Files().PartitionDir(node, tp))
		if !slices.Equal(got, want(10)) || segs != 3 {
			t.Fatalf("%s's files hold offsets %v in %d segments, want 0–9 in 3", node, got, segs)
		}
	}

	victim := "n3"
	if err := c.Kill(victim); err != nil {
		t.Fatal(err)
	}
	if got, _ := fileOffsets(t, c, c.Files().PartitionDir(victim, tp)); len(got) != 10 {
		t.Fatalf("a killed node's folder holds %d records, want the 10 it had", len(got))
	}
	produce(10, 14)
	// Its first segment's time index is damaged while it is down: the
	// restart finds it and writes it again from the .log.
	ti := filepath.Join(c.Files().PartitionDir(victim, tp), partlog.SegmentFileName(0, partlog.TimeIndexSuffix))
	tiWant, err := os.ReadFile(ti)
	if err != nil || len(tiWant) < 12 {
		t.Fatalf("the closed segment's time index: %d bytes, %v", len(tiWant), err)
	}
	if err := os.WriteFile(ti, tiWant[:7], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, victim+" to catch up after its restart", func() bool { return applied(c, victim, tp) == 14 })
	if got, _ := fileOffsets(t, c, c.Files().PartitionDir(victim, tp)); !slices.Equal(got, want(14)) {
		t.Fatalf("after its restart %s's files hold %v, want 0–13", victim, got)
	}
	// It read its 10 records back from the files rather than from raft,
	// and applied none of them twice: its log holds each offset once.
	var recovered []string
	for _, e := range c.Events(0) {
		if e.Kind == EventFiles {
			recovered = append(recovered, e.Text)
		}
	}
	if !slices.ContainsFunc(recovered, func(s string) bool {
		return strings.HasPrefix(s, victim+" recovered orders/0 from its files: offsets 0–9 in 3 segments, up to raft entry ")
	}) {
		t.Errorf("no recovery of orders/0 on %s in the events: %q", victim, recovered)
	}
	if !slices.ContainsFunc(recovered, func(s string) bool {
		return strings.HasPrefix(s, victim+" rebuilt 00000000000000000000.timeindex of orders/0 from its .log: it was 7 bytes long")
	}) {
		t.Errorf("the restart does not say it rebuilt the damaged time index: %q", recovered)
	}
	if got, _ := os.ReadFile(ti); !slices.Equal(got, tiWant) {
		t.Errorf("the time index after the restart: % x; want it as written, % x", got, tiWant)
	}
	recs := readReplica(t, c, victim, tp)
	if len(recs) != 14 || recs[0].Offset != 0 || recs[13].Offset != 13 || string(recs[13].Value) != "value 13" {
		t.Fatalf("%s's log after recovery: %d records", victim, len(recs))
	}

	// It dies in the middle of writing its last batch: the restart cuts
	// the torn batch off and raft brings it back, once.
	produce(14, 16)
	waitFor(t, 10*time.Second, victim+" to apply 16 records", func() bool { return applied(c, victim, tp) == 16 })
	torn, err := c.Files().CrashTorn(victim)
	if err != nil || len(torn) == 0 || !strings.HasPrefix(torn[0], victim+" died writing orders/0: the batch of offsets 15–15 is torn after ") {
		t.Fatalf("crash torn: %q, %v", torn, err)
	}
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, victim+" to catch up after the torn write", func() bool { return applied(c, victim, tp) == 16 })
	if got, _ := fileOffsets(t, c, c.Files().PartitionDir(victim, tp)); !slices.Equal(got, want(16)) {
		t.Fatalf("after the torn write %s's files hold %v, want 0–15", victim, got)
	}
	found := false
	for _, e := range c.Events(0) {
		found = found || e.Kind == EventFiles && strings.HasPrefix(e.Text, victim+" recovered orders/0: cut ") &&
			strings.Contains(e.Text, " of a torn batch at offset 15; from its files: offsets 0–14")
	}
	if !found {
		t.Error("the restart does not say it cut the torn batch at offset 15")
	}
}

// readReplica reads one replica's whole committed log.
func readReplica(t *testing.T, c *Cluster, node string, tp TopicPartition) []Record {
	t.Helper()
	f := c.replicaOn(node, tp.String()).partition()
	f.mu.RLock()
	defer f.mu.RUnlock()
	recs, err := f.log.Read(f.log.StartOffset(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = Record{Offset: r.Offset, Value: r.Value}
	}
	return out
}
