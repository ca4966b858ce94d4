package broker

// Where the replicas' partition logs live as files: a cluster given a
// DataDir keeps, for every replica of every partition, the folder
// DataDir/NODE/TOPIC-P that Kafka would have, with the segment files
// partlog writes (.log, .index, .timeindex).

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// DataDir is the folder the replicas' logs are written to, "" when the
// cluster keeps them in memory only.
func (c *Cluster) DataDir() string { return c.dataDir }

// PartitionDir is the folder of tp's replica on node, as Kafka names it
// (DataDir/n2/orders-0), or "" when the cluster has no DataDir. The
// folder exists only while or after node holds a replica of tp.
func (c *Cluster) PartitionDir(node string, tp TopicPartition) string {
	if c.dataDir == "" {
		return ""
	}
	return filepath.Join(c.dataDir, node, tp.Topic+"-"+strconv.Itoa(tp.Partition))
}

// attachFiles makes a partition replica's log write its files, telling
// the timeline if it cannot: the log goes on in memory either way.
func (f *partitionFSM) attachFiles() {
	c, rep := f.rep.c, f.rep
	if c == nil || c.dataDir == "" || c.filesOff.Load() {
		return
	}
	tp, err := ParseTopicPartition(rep.group)
	if err == nil {
		err = f.log.AttachDir(c.PartitionDir(rep.node, tp))
	}
	if err != nil {
		rep.emit(Event{Kind: EventRaftLog, Text: fmt.Sprintf("%s on %s cannot write its segment files: %v", rep.group, rep.node, err)})
	}
}

// ReleaseDataDir stops the cluster writing to its DataDir: every replica's
// log closes its files and writes none again, now or after a restart, and
// the folder keeps what it holds. A lab replacing its cluster calls it
// first, so the new cluster can take the same folder over.
func (c *Cluster) ReleaseDataDir() {
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
