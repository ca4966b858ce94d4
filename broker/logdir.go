package broker

// Where the replicas' partition logs live as files: a cluster given a
// DataDir keeps, for every replica of every partition, the folder
// DataDir/NODE/TOPIC-P that Kafka would have, with the segment files
// partlog writes (.log, .index, .timeindex).

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
)

// clearDataDir removes the node folders a cluster of at most MaxNodes
// could have left in dir, so a new cluster starts from empty folders
// without touching anything else a learner keeps there.
func clearDataDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: log folder %s: %v", ErrInvalid, dir, err)
	}
	for i := 1; i <= MaxNodes; i++ {
		if err := os.RemoveAll(filepath.Join(dir, "n"+strconv.Itoa(i))); err != nil {
			return fmt.Errorf("log folder %s: %w", dir, err)
		}
	}
	return nil
}

// LogFiles is a cluster's partition logs as files: where they are, and
// what a lab does with them (read them now, tear one, let them go).
type LogFiles struct{ c *Cluster }

// Files is the cluster's log files; they exist when Config.DataDir was set.
func (c *Cluster) Files() LogFiles { return LogFiles{c} }

// Dir is the folder the replicas' logs are written to, "" when the
// cluster keeps them in memory only.
func (lf LogFiles) Dir() string { return lf.c.dataDir }

// PartitionDir is the folder of tp's replica on node, as Kafka names it
// (DataDir/n2/orders-0), or "" when the cluster has no DataDir. The
// folder exists only while or after node holds a replica of tp.
func (lf LogFiles) PartitionDir(node string, tp TopicPartition) string {
	c := lf.c
	if c.dataDir == "" {
		return ""
	}
	return filepath.Join(c.dataDir, node, tp.Topic+"-"+strconv.Itoa(tp.Partition))
}

// filesDir is the folder of a partition replica's segment files, "" when
// it keeps none.
func (f *partitionFSM) filesDir() string {
	c, rep := f.rep.c, f.rep
	if c == nil || c.dataDir == "" || c.filesOff.Load() {
		return ""
	}
	tp, err := ParseTopicPartition(rep.group)
	if err != nil {
		return ""
	}
	return c.Files().PartitionDir(rep.node, tp)
}

// attachFiles makes a partition replica's log write its files, afresh,
// telling the timeline if it cannot: the log goes on in memory either way.
func (f *partitionFSM) attachFiles() {
	dir := f.filesDir()
	if dir == "" {
		return
	}
	f.log.SetWriteFault(f.writeFault)
	if err := f.log.AttachDir(dir); err != nil {
		f.rep.emit(Event{Kind: EventFiles, Text: fmt.Sprintf("%s cannot write %s's segment files: %v", f.rep.node, f.rep.group, err)})
		return
	}
	f.log.NoteApplied(f.applied)
}

// openFiles starts a new replica's log from its folder: what a killed
// replica left there is read back (partlog.Recover), and raft then
// replays only the entries after it. A folder with nothing usable is
// written afresh as raft rebuilds the log.
func (f *partitionFSM) openFiles(cfg partlog.Config) {
	dir := f.filesDir()
	if dir == "" {
		return
	}
	l, rec, err := partlog.Recover(cfg, dir)
	if err != nil || !rec.Found {
		f.attachFiles()
		return
	}
	f.log, f.applied = l, rec.Applied
	f.log.SetWriteFault(f.writeFault)
	rep := f.rep
	text := fmt.Sprintf("%s recovered %s from its files: offsets %s–%s in %s, up to raft entry %d",
		rep.node, rep.group, thousands(rec.Start), thousands(rec.End-1), plural(rec.Segments, "segment"), rec.Applied)
	if rec.End == rec.Start {
		text = fmt.Sprintf("%s recovered %s from its files: no records, up to raft entry %d", rep.node, rep.group, rec.Applied)
	}
	if rec.CutBytes > 0 {
		text = fmt.Sprintf("%s recovered %s: cut %s of a torn batch at offset %s; %s", rep.node, rep.group,
			plural(int(rec.CutBytes), "byte"), thousands(rec.CutOffset), strings.TrimPrefix(text, rep.node+" recovered "+rep.group+" "))
	}
	rep.emit(Event{Kind: EventFiles, From: rec.Start, To: rec.End, Text: text})
	for _, r := range rec.Rebuilt {
		rep.emit(Event{Kind: EventFiles, From: r.Segment, To: r.Segment,
			Text: fmt.Sprintf("%s rebuilt %s of %s from its .log: %s", rep.node, r.File, rep.group, r.Problem)})
	}
}

// snapshotOften is the raft snapshot schedule of a partition replica
// whose log lives in files. Its snapshot names the closed segments'
// files rather than holding their bytes, so taking one costs little,
// while every raft entry kept beyond TrailingLogs holds a whole batch in
// memory until the next snapshot lets raft drop it. So it looks ten
// times as often (every 50 to 100 ms at fast timing), and snapshots once
// half of TrailingLogs has gone by: with 1,000,000 messages of 100 bytes
// loaded at RF 3, the process's peak memory fell from about 117 MB to
// 70–74 MB (72–100 MB looking five times as often). The trailing
// entries a lagging follower catches up from stay as many.
func snapshotOften(conf *raft.Config) {
	conf.SnapshotInterval = max(conf.SnapshotInterval/10, 20*time.Millisecond)
	conf.SnapshotThreshold = max(conf.TrailingLogs/2, 1)
}

// thousands writes n with its thousands separated: 1,500.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
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

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return thousands(int64(n)) + " " + unit + "s"
}

// Release stops the cluster writing to its DataDir: every replica's
// log closes its files and writes none again, now or after a restart, and
// the folder keeps what it holds. A lab replacing its cluster calls it
// first, so the new cluster can take the same folder over.
func (lf LogFiles) Release() {
	c := lf.c
	c.filesOff.Store(true)
	c.mu.Lock()
	var fsms []*partitionFSM
	for _, n := range c.nodes {
		for _, rep := range n.replicas {
			if f := rep.partition(); f != nil {
				fsms = append(fsms, f)
			}
		}
	}
	c.mu.Unlock()
	for _, f := range fsms {
		f.mu.Lock()
		f.log.DetachDir()
		f.mu.Unlock()
	}
}

// Sync writes every replica's buffered segment bytes and index
// entries to its files, so that reading the folder now sees all of them
// (a replica writes several batches at a time, and keeps its active
// segment's index entries in memory, as Kafka keeps them in mapped files).
func (lf LogFiles) Sync() error {
	c := lf.c
	c.mu.Lock()
	var fsms []*partitionFSM
	for _, n := range c.nodes {
		for _, rep := range n.replicas {
			if f := rep.partition(); f != nil {
				fsms = append(fsms, f)
			}
		}
	}
	c.mu.Unlock()
	var first error
	for _, f := range fsms {
		f.mu.RLock()
		err := f.log.SyncFiles()
		f.mu.RUnlock()
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// CrashTorn kills a node as Kill does, in the middle of a write: in each
// of its partition replicas' folders the last batch written is cut in
// half, as a crash while writing it would leave it. The restart then
// finds the torn batch, cuts it off and has raft replay its entry. It
// returns one line per batch torn.
func (lf LogFiles) CrashTorn(id string) ([]string, error) {
	c := lf.c
	if c.dataDir == "" || c.filesOff.Load() {
		return nil, fmt.Errorf("%w: crash %s torn: this cluster keeps no segment files to tear", ErrInvalid, id)
	}
	c.mu.Lock()
	n := c.nodes[id]
	var groups []string
	if n != nil {
		for g, rep := range n.replicas {
			if rep.kind == kindPartition {
				groups = append(groups, g)
			}
		}
	}
	c.mu.Unlock()
	if err := c.Kill(id); err != nil {
		return nil, err
	}
	slices.Sort(groups)
	var out []string
	for _, g := range groups {
		tp, err := ParseTopicPartition(g)
		if err != nil {
			continue
		}
		t, ok, err := partlog.TearLastWrite(c.Files().PartitionDir(id, tp))
		if err != nil {
			return out, fmt.Errorf("crash %s torn: %s: %w", id, g, err)
		}
		if !ok {
			continue
		}
		text := fmt.Sprintf("%s died writing %s: the batch of offsets %s–%s is torn after %s of its %s",
			id, g, thousands(t.BaseOffset), thousands(t.LastOffset), plural(int(t.Kept), "byte"), thousands(t.Size))
		c.events.emit(Event{Kind: EventFiles, Node: id, Group: g, From: t.BaseOffset, To: t.LastOffset + 1, Text: text})
		out = append(out, text)
	}
	return out, nil
}

// FailWrites makes every later write to node's segment files fail with
// err, as a disk that has filled up fails them (syscall.ENOSPC); nil
// lets writes through again. A replica whose files failed stays without
// them until its node restarts, as a Kafka broker takes a failed log
// folder offline until it restarts: its log goes on in memory, and as a
// leader it refuses produces with ErrStorage.
func (lf LogFiles) FailWrites(node string, err error) {
	if err == nil {
		lf.c.diskFull.Delete(node)
		return
	}
	lf.c.diskFull.Store(node, err)
}

// writeFault is the error the replica's next file write fails with,
// nil for none.
func (f *partitionFSM) writeFault() error {
	if err, ok := f.rep.c.diskFull.Load(f.rep.node); ok {
		return err.(error)
	}
	return nil
}

// filesFailed is why the replica's segment files stopped, nil while they
// are written.
func (f *partitionFSM) filesFailed() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.log.FilesErr()
}

// handOff moves leadership away from a replica whose files have failed,
// as Kafka moves it off a broker whose log folder went offline, so
// producers find a leader that can write. One transfer at a time; the
// others answer ErrStorage at once and retry. A replica with no peer to
// take over (RF 1) keeps leading and refusing; the timeline hears of it
// once.
func (f *partitionFSM) handOff(r *raft.Raft) {
	if !f.handing.CompareAndSwap(false, true) {
		return
	}
	defer f.handing.Store(false)
	if err := f.rep.wait(r.LeadershipTransfer()); err != nil && f.stuck.CompareAndSwap(false, true) {
		f.rep.emit(Event{Kind: EventFiles, Text: fmt.Sprintf("%s cannot write %s's segment files and could not hand leadership on: %v", f.rep.node, f.rep.group, err)})
	}
}
