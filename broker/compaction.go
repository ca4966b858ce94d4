package broker

// Compaction on a topic with cleanup.policy=compact: the leader decides
// when a pass runs and proposes it as a raft entry, so every replica
// cleans the same log at the same point, the way retention follows the
// leader's clock in its entries.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/broker/partcmd"
	"github.com/mqlab/mqlab/broker/partlog"
)

// CompactResult is what one compaction pass did to a partition.
type CompactResult = partlog.CompactResult

// Compact runs one compaction pass on a partition of a compacted topic
// now, whatever its dirty ratio, and returns what it did: the lab's
// compact command. cleaned is false when the partition has no closed
// segment to clean yet.
func (c *Cluster) Compact(ctx context.Context, tp TopicPartition) (res CompactResult, cleaned bool, err error) {
	cfg, err := c.topicConfig(tp)
	if err != nil {
		return res, false, fmt.Errorf("compact %s: %w", tp, err)
	}
	if !cfg.Compacted() {
		return res, false, fmt.Errorf("compact %s: %w: topic %s has cleanup=%s; only a topic created with cleanup=%s or %s is compacted",
			tp, ErrInvalid, tp.Topic, orDelete(cfg.Cleanup), CleanupCompact, CleanupCompactDelete)
	}
	for {
		lead, err := c.waitReadyLeader(ctx, tp.String())
		if err != nil {
			return res, false, fmt.Errorf("compact %s: %w", tp, err)
		}
		out, index, err := lead.compact()
		if errors.Is(err, ErrNotLeader) {
			continue
		}
		if err != nil {
			return res, false, fmt.Errorf("compact %s: %w", tp, err)
		}
		c.awaitReplicas(ctx, tp, index)
		return out.compacted, out.cleaned, nil
	}
}

// awaitReplicas waits, for a little while, until every live replica of
// tp has applied the raft entry at index, so what a learner lists next
// on a follower shows it. A replica cut off from its leader is not
// waited for long: it catches up when it can.
func (c *Cluster) awaitReplicas(ctx context.Context, tp TopicPartition, index uint64) {
	ctx, cancel := context.WithTimeout(ctx, max(2*time.Second, 20*c.timing.HeartbeatTimeout))
	defer cancel()
	for {
		behind := false
		for _, node := range c.Nodes() {
			rep := c.replicaOn(node, tp.String())
			if rep == nil || rep.partition() == nil {
				continue
			}
			if _, _, applied := rep.partition().state(); applied < index {
				behind = true
			}
		}
		if !behind {
			return
		}
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func orDelete(cleanup string) string {
	if cleanup == "" {
		return CleanupDelete
	}
	return cleanup
}

// topicConfig returns the configuration of tp's topic, checking the
// partition exists.
func (c *Cluster) topicConfig(tp TopicPartition) (TopicConfig, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, ok := c.topics[tp.Topic]
	switch {
	case !ok:
		return TopicConfig{}, fmt.Errorf("%w: %s", ErrUnknownTopic, tp.Topic)
	case tp.Partition < 0 || tp.Partition >= len(rec.Placement):
		return TopicConfig{}, fmt.Errorf("%w: %s has partitions 0 to %d", ErrUnknownPartition, tp.Topic, len(rec.Placement)-1)
	}
	return rec.Config, nil
}

// compact proposes a compact entry on this replica, which must lead, and
// waits for it to apply.
func (rep *replica) compact() (applyResult, uint64, error) {
	r := rep.raft()
	if r == nil || !rep.isLeader() {
		return applyResult{}, 0, fmt.Errorf("%w: %s on %s", ErrNotLeader, rep.group, rep.node)
	}
	f := r.Apply(partcmd.EncodeCompact(rep.c.now().UnixNano()), rep.c.requestTimeout())
	if err := rep.wait(f); err != nil {
		return applyResult{}, 0, rep.applyError(err)
	}
	out, ok := f.Response().(applyResult)
	if !ok {
		return applyResult{}, 0, fmt.Errorf("unexpected apply response %T", f.Response())
	}
	return out, f.Index(), out.err
}

// dirty reports whether the leader's log of a compacted partition has
// reached its dirty ratio: enough bytes in closed segments since the
// last pass that the cleaner should run.
func (rep *replica) dirty(ratio float64) bool {
	f := rep.partition()
	if f == nil {
		return false
	}
	f.mu.RLock()
	l := f.log
	f.mu.RUnlock()
	if ratio == 0 {
		ratio = defaultDirtyRatio
	}
	d := l.DirtyRatio()
	return d > 0 && d >= ratio
}

// refuseUnkeyed fails a batch for a compacted partition whose record
// unkeyed (counting from 0) has no key, before it is proposed; unkeyed is
// -1 when every record has one. Compaction keeps records by key, so Kafka
// refuses such a batch (INVALID_RECORD). Apply refuses it too, so every
// replica agrees even if one got through.
func (rep *replica) refuseUnkeyed(unkeyed int) error {
	f := rep.partition()
	if f == nil || unkeyed < 0 {
		return nil
	}
	f.mu.RLock()
	compact := f.log.Config().Compact
	f.mu.RUnlock()
	if !compact {
		return nil
	}
	return fmt.Errorf("%w: %s: record %d of the batch has no key; a compacted topic keeps the newest record of each key, so every record needs one (produce with key=...)",
		ErrNoKey, rep.group, unkeyed)
}

// firstUnkeyed is the first of recs without a key, -1 when all have one.
func firstUnkeyed(recs []partlog.Record) int {
	for i := range recs {
		if recs[i].Key == nil {
			return i
		}
	}
	return -1
}
