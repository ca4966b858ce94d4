package broker

// Topics: their configuration and names, where their partitions' replicas
// go, creating them, and looking them up.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
)

// TopicConfig describes a partitioned log.
type TopicConfig struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
	RF         int    `json:"rf"` // replicas per partition; 0 means min(3, nodes)
	// A segment closes after SegmentRecords records or SegmentBytes bytes,
	// whichever comes first; both zero means 16 records, small enough that
	// a learner sees several.
	SegmentRecords int   `json:"segment_records,omitempty"`
	SegmentBytes   int64 `json:"segment_bytes,omitempty"`
	// SegmentAge closes a segment when a batch arrives that much newer
	// than its first (Kafka's segment.ms).
	SegmentAge time.Duration `json:"segment_age,omitempty"`
	// Retention deletes whole closed segments older than RetentionAge or
	// beyond RetentionBytes in total; zero keeps everything.
	RetentionAge   time.Duration `json:"retention_age,omitempty"`
	RetentionBytes int64         `json:"retention_bytes,omitempty"`

	// Cleanup is Kafka's cleanup.policy: "delete" (the default: retention
	// alone), "compact" (keep the newest record of each key; retention
	// off), or "compact,delete" (both).
	Cleanup string `json:"cleanup,omitempty"`
	// DeleteRetention is how long a tombstone stays after its timestamp
	// before a compaction pass removes it (delete.retention.ms; 0 = one
	// day, Kafka's default).
	DeleteRetention time.Duration `json:"delete_retention,omitempty"`
	// DirtyRatio starts a compaction pass once this share of the closed
	// segments' bytes arrived since the last pass
	// (min.cleanable.dirty.ratio; 0 = 0.5, Kafka's default).
	DirtyRatio float64 `json:"dirty_ratio,omitempty"`
	// ManualCleaner: passes run only when asked (Cluster.Compact), so a
	// lesson can count what a pass will find before it runs. Kafka has no
	// such switch.
	ManualCleaner bool `json:"manual_cleaner,omitempty"`
}

// Cleanup policies.
const (
	CleanupDelete        = "delete"
	CleanupCompact       = "compact"
	CleanupCompactDelete = "compact,delete"
)

// defaultDirtyRatio is Kafka's min.cleanable.dirty.ratio default.
const defaultDirtyRatio = 0.5

// Compacted reports whether the topic's cleanup policy includes compact.
func (t TopicConfig) Compacted() bool {
	return t.Cleanup == CleanupCompact || t.Cleanup == CleanupCompactDelete
}

// NormalizeCleanup turns a cleanup.policy value ("compact", "delete",
// "compact,delete" in either order, spaces allowed) into one of the
// Cleanup constants, or says what is wrong with it.
func NormalizeCleanup(s string) (string, error) {
	var compact, del bool
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "compact":
			compact = true
		case "delete":
			del = true
		default:
			return "", fmt.Errorf("%w: cleanup policy %q: want delete, compact or compact,delete", ErrInvalid, s)
		}
	}
	switch {
	case compact && del:
		return CleanupCompactDelete, nil
	case compact:
		return CleanupCompact, nil
	}
	return CleanupDelete, nil
}

// MaxPartitions bounds a topic's partitions: every partition is a raft group
// with timers of its own, and a lab runs in one process.
const MaxPartitions = 64

var topicName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func (t TopicConfig) validate(nodes int) error {
	if !topicName.MatchString(t.Name) {
		return fmt.Errorf("%w: topic name %q: use 1–64 letters, digits, '.', '_' or '-'", ErrInvalid, t.Name)
	}
	if t.Partitions < 1 || t.Partitions > MaxPartitions {
		return fmt.Errorf("%w: topic %s: partitions=%d; want 1 to %d", ErrInvalid, t.Name, t.Partitions, MaxPartitions)
	}
	if t.RF < 1 || t.RF > nodes {
		return fmt.Errorf("%w: topic %s: rf=%d; want 1 to %d (the cluster has %d nodes)", ErrInvalid, t.Name, t.RF, nodes, nodes)
	}
	if t.Cleanup != "" {
		if norm, err := NormalizeCleanup(t.Cleanup); err != nil || norm != t.Cleanup {
			return fmt.Errorf("%w: %w: topic %s: cleanup %q: want %s, %s or %s", ErrInvalid, ErrInvalidConfig, t.Name, t.Cleanup, CleanupDelete, CleanupCompact, CleanupCompactDelete)
		}
	}
	if t.Cleanup == CleanupCompact && (t.RetentionAge > 0 || t.RetentionBytes > 0) {
		return fmt.Errorf("%w: %w: topic %s: retention deletes segments only under cleanup=%s; with cleanup=%s nothing is deleted by age or size", ErrInvalid, ErrInvalidConfig, t.Name, CleanupCompactDelete, CleanupCompact)
	}
	if !t.Compacted() && (t.DeleteRetention != 0 || t.DirtyRatio != 0 || t.ManualCleaner) {
		return fmt.Errorf("%w: %w: topic %s: delete retention, dirty ratio and the cleaner apply to compacted topics; add cleanup=%s", ErrInvalid, ErrInvalidConfig, t.Name, CleanupCompact)
	}
	if t.DirtyRatio < 0 || t.DirtyRatio > 1 {
		return fmt.Errorf("%w: %w: topic %s: dirty ratio %g; want a share from 0 to 1 (0.5 is Kafka's default)", ErrInvalid, ErrInvalidConfig, t.Name, t.DirtyRatio)
	}
	if _, err := partlog.New(t.partlogConfig()); err != nil {
		return fmt.Errorf("%w: %w: topic %s: %v", ErrInvalid, ErrInvalidConfig, t.Name, err)
	}
	return nil
}

func (t TopicConfig) partlogConfig() partlog.Config {
	return partlog.Config{
		SegmentRecords:  t.SegmentRecords,
		SegmentBytes:    t.SegmentBytes,
		SegmentAge:      t.SegmentAge,
		RetentionAge:    t.RetentionAge,
		RetentionBytes:  t.RetentionBytes,
		Compact:         t.Compacted(),
		DeleteRetention: t.DeleteRetention,
	}
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int
}

func (tp TopicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(tp.Partition) }

// ParseTopicPartition reads "orders/0".
func ParseTopicPartition(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("%w: %q is not a partition; write TOPIC/N, e.g. orders/0", ErrInvalid, s)
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 0 {
		return TopicPartition{}, fmt.Errorf("%w: %q: the partition after '/' must be a number ≥ 0, e.g. orders/0", ErrInvalid, s)
	}
	return TopicPartition{Topic: s[:i], Partition: p}, nil
}

// place puts partition p's replicas on rf consecutive nodes starting at a
// different node for each partition, so the preferred leaders (first in
// each list) spread over the nodes. start shifts whole topics, so several
// one-partition topics do not all lead on n1.
func place(nodes []string, partitions, rf, start int) [][]string {
	out := make([][]string, partitions)
	for p := range out {
		for i := 0; i < rf; i++ {
			out[p] = append(out[p], nodes[(start+p+i)%len(nodes)])
		}
	}
	return out
}

// CreateTopic creates a topic, starts a raft group per partition on its
// replicas, and waits until every partition has a leader, moving each to its
// preferred replica so leaders spread over the nodes.
func (c *Cluster) CreateTopic(ctx context.Context, cfg TopicConfig) error {
	if IsInternalTopic(cfg.Name) {
		return fmt.Errorf("create topic: %w: %q: names starting with \"__\" are reserved for internal topics such as %s", ErrInvalid, cfg.Name, OffsetsTopic)
	}
	return c.createTopic(ctx, cfg)
}

// createTopic creates any topic, internal ones included.
func (c *Cluster) createTopic(ctx context.Context, cfg TopicConfig) error {
	c.admin.Lock()
	defer c.admin.Unlock()
	if err := c.checkOpen(); err != nil {
		return err
	}
	if cfg.RF == 0 {
		cfg.RF = c.defaultRF()
	}
	if err := cfg.validate(len(c.nodeIDs)); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	c.mu.Lock()
	_, exists := c.topics[cfg.Name]
	start := 0
	for _, t := range c.topics {
		if !IsInternalTopic(t.Config.Name) { // internal topics leave user placement as it was
			start += len(t.Placement)
		}
	}
	if IsInternalTopic(cfg.Name) {
		start = len(c.nodeIDs) - 1 // __consumer_offsets/0 prefers the last node, user topics the first
	}
	c.mu.Unlock()
	if exists {
		return fmt.Errorf("create topic: %w: %q", ErrTopicExists, cfg.Name)
	}
	rec := topicRecord{Config: cfg, Placement: place(c.nodeIDs, cfg.Partitions, cfg.RF, start)}
	if _, err := c.controllerApply(ctx, controllerCmd{Op: "create-topic", Topic: &rec}); err != nil {
		return fmt.Errorf("create topic %s: %w", cfg.Name, err)
	}
	c.mu.Lock()
	rec.Seq = len(c.topics)
	c.topics[cfg.Name] = rec
	c.mu.Unlock()
	for p, nodes := range rec.Placement {
		if err := c.startGroup(raftGroup{TopicPartition{cfg.Name, p}.String(), kindPartition}, nodes); err != nil {
			return fmt.Errorf("create topic %s: %w", cfg.Name, err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rec.Placement))
	for p, nodes := range rec.Placement {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = c.elect(ctx, TopicPartition{cfg.Name, p}.String(), nodes[0], true)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("create topic %s: %w", cfg.Name, err)
	}
	c.events.emit(Event{Kind: EventTopicCreated, Text: fmt.Sprintf("topic %s created: %d partition(s), rf %d", cfg.Name, cfg.Partitions, cfg.RF)})
	return nil
}

// Topics returns the configuration of every topic, in creation order, without
// reading any replica: a cheap lookup for validating names.
func (c *Cluster) Topics() []TopicConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := c.topicsLocked()
	out := make([]TopicConfig, len(recs))
	for i, r := range recs {
		out[i] = r.Config
	}
	return out
}

func (c *Cluster) topicsLocked() []topicRecord {
	out := make([]topicRecord, 0, len(c.topics))
	for _, t := range c.topics {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := IsInternalTopic(out[i].Config.Name), IsInternalTopic(out[j].Config.Name); a != b {
			return b // internal topics last
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

func (c *Cluster) topicPartition(tp TopicPartition) (topicRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return topicRecord{}, ErrClosed
	}
	rec, ok := c.topics[tp.Topic]
	if !ok {
		names := make([]string, 0, len(c.topics))
		for n := range c.topics {
			names = append(names, n)
		}
		sort.Strings(names)
		return rec, fmt.Errorf("%w: %q (topics: %s)", ErrUnknownTopic, tp.Topic, strings.Join(names, ", "))
	}
	if tp.Partition < 0 || tp.Partition >= len(rec.Placement) {
		return rec, fmt.Errorf("%w: %s has partitions 0 to %d, not %d", ErrUnknownPartition, tp.Topic, len(rec.Placement)-1, tp.Partition)
	}
	return rec, nil
}

func (c *Cluster) partlogConfig(group string) (partlog.Config, error) {
	tp, err := ParseTopicPartition(group)
	if err != nil {
		return partlog.Config{}, err
	}
	c.mu.Lock()
	rec, ok := c.topics[tp.Topic]
	c.mu.Unlock()
	if !ok {
		return partlog.Config{}, fmt.Errorf("%w: %s", ErrUnknownTopic, tp.Topic)
	}
	cfg := rec.Config.partlogConfig()
	if !strings.HasPrefix(tp.Topic, "__") {
		cfg.Name = tp.String() // Kafka clients' records get their message ids from it
	}
	return cfg, nil
}
