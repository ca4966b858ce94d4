package broker

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
)

// dumpedOffsets reads a replica's segment files as `log dump` prints them
// and returns the offsets of their records, in file order; nil while a
// file it listed is being rewritten (a pass on a replica catching up).
func dumpedOffsets(t *testing.T, c *Cluster, dir string) []int64 {
	t.Helper()
	if err := c.Files().Sync(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), partlog.LogSuffix) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		lines, err := partlog.DumpFile(e.Name(), data, true)
		if err != nil {
			t.Fatalf("dump %s: %v", e.Name(), err)
		}
		for _, l := range lines {
			if rest, ok := strings.CutPrefix(l, "| offset: "); ok {
				n, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				if err != nil {
					t.Fatalf("dump line %q: %v", l, err)
				}
				out = append(out, n)
			}
		}
	}
	return out
}

// A pass through raft cleans every replica alike, files included, keeps
// offsets, and the cleaner's automatic trigger follows the dirty ratio.
func TestCompactionCleansEveryReplica(t *testing.T) {
	t.Parallel()
	c, _ := newClockedCluster(t)
	tp := TopicPartition{"accounts", 0}
	mustCreate(t, c, TopicConfig{Name: "accounts", Partitions: 1, SegmentRecords: 4, Cleanup: CleanupCompact, ManualCleaner: true})
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, BatchSize: 1})
	ctx := ctxFor(t, 10*time.Second)

	res := p.Produce(ctx, Message{Topic: "accounts", Value: []byte("no key")})
	if res[0].Outcome != OutcomeFailed || !errors.Is(res[0].Err, ErrNoKey) || !strings.Contains(res[0].Err.Error(), "key=") {
		t.Fatalf("an unkeyed record on a compacted topic: %v %v; want refused with ErrNoKey", res[0].Outcome, res[0].Err)
	}
	// Keys k0 k1 k2 k0 k1 k2 ... at offsets 0–9: segments [0,4) [4,8)
	// closed, [8,10) active.
	for i := range 10 {
		if r := p.Produce(ctx, msg("accounts", "k"+strconv.Itoa(i%3), i)); r[0].Outcome != OutcomeAcked {
			t.Fatalf("produce %d: %v", i, r[0].Err)
		}
	}
	if _, _, err := c.Compact(ctx, TopicPartition{"nope", 0}); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("compact an unknown topic: %v", err)
	}
	got, cleaned, err := c.Compact(ctx, tp)
	// In the closed segments the newest are k2 at 5, k0 at 6, k1 at 7.
	want := CompactResult{From: 0, To: 8, SegmentsBefore: 2, SegmentsAfter: 1, RecordsBefore: 8, RecordsAfter: 3}
	if err != nil || !cleaned || got != want {
		t.Fatalf("compact: %+v cleaned=%v err=%v; want %+v", got, cleaned, err, want)
	}
	// Every follower applies the same pass when the entry reaches it.
	for _, node := range c.Nodes() {
		var offs []int64
		waitFor(t, 10*time.Second, node+"'s files to hold offsets 5–9", func() bool {
			offs = dumpedOffsets(t, c, c.Files().PartitionDir(node, tp))
			return slices.Equal(offs, []int64{5, 6, 7, 8, 9})
		})
	}
	recs := readAll(t, c, tp)
	if len(recs) != 5 || recs[0].Offset != 5 || string(recs[0].Key) != "k2" || recs[4].Offset != 9 {
		t.Fatalf("read after the pass: %d records from %d; want offsets 5–9", len(recs), recs[0].Offset)
	}

	// A follower down during the next pass reads its old files back at
	// its restart and catches up through raft, pass included; one that
	// restarts after the pass reads the compacted files, gaps and all.
	lead := c.Leader(tp)
	var down string
	for _, n := range c.Nodes() {
		if n != lead {
			down = n
			break
		}
	}
	if err := c.Kill(down); err != nil {
		t.Fatal(err)
	}
	for i := 10; i < 14; i++ { // k1 k2 k0 k1 at 10–13: [8,12) closes
		if r := p.Produce(ctx, msg("accounts", "k"+strconv.Itoa(i%3), i)); r[0].Outcome != OutcomeAcked {
			t.Fatalf("produce %d: %v", i, r[0].Err)
		}
	}
	// Closed now: 5 6 7 and 8–11; the newest of k0, k1, k2 there are
	// 9, 10 and 11. The active segment holds 12 and 13.
	if _, _, err := c.Compact(ctx, tp); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(down); err != nil {
		t.Fatal(err)
	}
	for _, node := range c.Nodes() {
		if node == down {
			continue
		}
		if err := c.Kill(node); err != nil {
			t.Fatal(err)
		}
		if err := c.Restart(node); err != nil {
			t.Fatal(err)
		}
		break
	}
	for _, node := range c.Nodes() {
		var offs []int64
		waitFor(t, 20*time.Second, node+"'s files to hold offsets 9–13", func() bool {
			offs = dumpedOffsets(t, c, c.Files().PartitionDir(node, tp))
			return slices.Equal(offs, []int64{9, 10, 11, 12, 13})
		})
	}
	var passes []string
	for _, e := range c.Events(0) {
		if e.Kind == EventCompacted && e.Group == tp.String() {
			passes = append(passes, e.Text)
		}
	}
	if len(passes) != 2 || !strings.Contains(passes[0], "cleaned accounts/0 offsets 0–7: 8 → 3 records") ||
		!strings.Contains(passes[1], "offsets 0–11: 7 → 3 records") {
		t.Errorf("the passes' events say %q", passes)
	}

	// Without ManualCleaner a roll makes the log dirty enough: a pass
	// follows on its own.
	mustCreate(t, c, TopicConfig{Name: "prices", Partitions: 1, SegmentRecords: 2, Cleanup: CleanupCompact})
	for i := range 5 {
		if r := p.Produce(ctx, msg("prices", "eur", i)); r[0].Outcome != OutcomeAcked {
			t.Fatalf("produce %d: %v", i, r[0].Err)
		}
	}
	waitFor(t, 20*time.Second, "the cleaner to run on prices/0", func() bool {
		for _, e := range c.Events(0) {
			if e.Kind == EventCompacted && e.Group == "prices/0" {
				return true
			}
		}
		return false
	})
}

func TestCompactedTopicConfigIsChecked(t *testing.T) {
	for _, tc := range []struct {
		cfg  TopicConfig
		says string
	}{
		{TopicConfig{Name: "a", Partitions: 1, RF: 1, Cleanup: "shred"}, "want delete, compact or compact,delete"},
		{TopicConfig{Name: "a", Partitions: 1, RF: 1, Cleanup: CleanupCompact, RetentionAge: time.Minute}, "cleanup=compact,delete"},
		{TopicConfig{Name: "a", Partitions: 1, RF: 1, DeleteRetention: time.Minute}, "add cleanup=compact"},
		{TopicConfig{Name: "a", Partitions: 1, RF: 1, Cleanup: CleanupCompact, DirtyRatio: 1.5}, "from 0 to 1"},
	} {
		err := tc.cfg.validate(1)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v; want ErrInvalid saying %q", tc.cfg, err, tc.says)
		}
	}
	if err := (TopicConfig{Name: "a", Partitions: 1, RF: 1, Cleanup: CleanupCompactDelete, RetentionAge: time.Minute}).validate(1); err != nil {
		t.Errorf("compact,delete with retention: %v", err)
	}
}
