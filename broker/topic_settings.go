package broker

// A topic's configuration as it takes effect: the zero fields of a
// TopicConfig stand for defaults, and an outside client describing the
// topic is owed the values the partitions really use.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// DefaultDirtyRatio is Kafka's min.cleanable.dirty.ratio default, which
// a compacted topic gets when it names none.
const DefaultDirtyRatio = defaultDirtyRatio

// TopicSettings is a topic's configuration with every default filled in.
type TopicSettings struct {
	Config TopicConfig // as created
	// Cleanup is the policy in force: CleanupDelete when none was given.
	Cleanup string
	// SegmentRecords is the record limit of a segment, 0 for none.
	SegmentRecords  int
	DeleteRetention time.Duration
	DirtyRatio      float64
	// IndexIntervalBytes is how many bytes of keys and values a segment
	// takes between two entries of its indexes.
	IndexIntervalBytes int
	// MinInSync is how many replicas must hold a write before acks=all
	// answers: a majority of RF, raft's rule, whatever a client asks.
	MinInSync int
}

// Settings returns t with its defaults filled in: the segment limits and
// tombstone retention as the partitions' logs apply them.
func (t TopicConfig) Settings() TopicSettings {
	s := TopicSettings{Config: t, Cleanup: t.Cleanup, SegmentRecords: t.SegmentRecords,
		DeleteRetention: t.DeleteRetention, DirtyRatio: t.DirtyRatio, MinInSync: t.RF/2 + 1}
	if s.Cleanup == "" {
		s.Cleanup = CleanupDelete
	}
	if l, err := partlog.New(t.partlogConfig()); err == nil {
		eff := l.Config()
		s.SegmentRecords, s.DeleteRetention, s.IndexIntervalBytes = eff.SegmentRecords, eff.DeleteRetention, eff.IndexIntervalBytes
	}
	if s.DirtyRatio == 0 {
		s.DirtyRatio = DefaultDirtyRatio
	}
	return s
}

// TopicConfig answers, through the node, how a topic is configured: an
// outside client's describe. The error wraps ErrUnknownTopic for a topic
// that does not exist.
func (f Front) TopicConfig(ctx context.Context, name string) (TopicConfig, error) {
	var cfg TopicConfig
	err := f.c.net.Call(ctx, f.client, f.node, raftnet.RequestMetadata, func() error {
		rec, err := f.c.topicPartition(TopicPartition{Topic: name})
		if err != nil {
			return fmt.Errorf("describe topic %s: %w", name, err)
		}
		cfg = rec.Config
		if cfg.RF == 0 {
			cfg.RF = len(rec.Placement[0])
		}
		return nil
	})
	return cfg, err
}

// NodeSettings is what a node says of itself to an outside client.
type NodeSettings struct {
	// DefaultRF is the replication factor of a topic created without one.
	DefaultRF int
	// LogDir is the folder of the node's partition logs, "" when the
	// cluster keeps them in memory only.
	LogDir string
}

// Settings answers what the node is configured with; it asks nothing
// across the network, as a broker's static configuration is its own.
func (f Front) Settings() NodeSettings {
	ns := NodeSettings{DefaultRF: f.c.defaultRF()}
	if dir := f.c.Files().Dir(); dir != "" {
		ns.LogDir = filepath.Join(dir, f.node)
	}
	return ns
}
