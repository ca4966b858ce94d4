// Package probe lets the benchmark harness (broker/bench) read what a
// benchmark needs of the broker's insides — a replica's raft, its offsets,
// the size of a produce entry — without those reads becoming part of the
// broker's API. Package broker fills in Of and the functions below when
// it loads; only packages under broker/ can import this one.
package probe

import (
	"context"
	"time"

	"github.com/hashicorp/raft"

	"github.com/mqlab/mqlab/broker/partlog"
)

// Cluster is what a benchmark reads of a running cluster.
type Cluster interface {
	// LeaderOf is the replica leading a raft group ("orders/0", a queue),
	// or nil.
	LeaderOf(group string) Replica
	// ReplicaOn is node's replica of a raft group, or nil.
	ReplicaOn(node, group string) Replica
	// Now is the cluster's clock.
	Now() time.Time
}

// Replica is what a benchmark reads of one replica.
type Replica interface {
	Raft() *raft.Raft
	// ReadyLeader: it leads and has passed its barrier.
	ReadyLeader() bool
	// Offsets is a partition replica's log start and high-water mark;
	// ok is false for a queue's replica.
	Offsets() (start, hwm int64, ok bool)
	// LogEnd is a partition replica's log end offset.
	LogEnd() int64
	// LastProduceEntrySize is the size of the newest produce entry in the
	// replica's raft log, or 0.
	LastProduceEntrySize() int
}

var (
	// Of returns the probe of a *broker.Cluster.
	Of func(cluster any) Cluster
	// EncodeProduce is the raft entry of one produce request, as the
	// broker proposes it.
	EncodeProduce func(reqID uint64, now int64, b partlog.Batch) []byte
	// FastRaftConfig is the raft configuration the broker gives node's
	// replicas on fast timing.
	FastRaftConfig func(node string) *raft.Config
	// Poll waits until cond holds, checking every few milliseconds, or
	// until ctx ends, as the broker's own waits do.
	Poll func(ctx context.Context, cond func() bool) error
)
