package broker

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
	// Retention deletes whole closed segments older than RetentionAge or
	// beyond RetentionBytes in total; zero keeps everything.
	RetentionAge   time.Duration `json:"retention_age,omitempty"`
	RetentionBytes int64         `json:"retention_bytes,omitempty"`
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
	if _, err := partlog.New(t.partlogConfig()); err != nil {
		return fmt.Errorf("%w: topic %s: %v", ErrInvalid, t.Name, err)
	}
	return nil
}

func (t TopicConfig) partlogConfig() partlog.Config {
	return partlog.Config{
		SegmentRecords: t.SegmentRecords,
		SegmentBytes:   t.SegmentBytes,
		RetentionAge:   t.RetentionAge,
		RetentionBytes: t.RetentionBytes,
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
