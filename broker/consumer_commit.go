package broker

// A consumer's offset commits: automatic and explicit ones, the checks
// before them, the request to the coordinator, and reading back what the
// group has committed.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mqlab/mqlab/broker/raftnet"
)

// commitableLocked picks the offsets worth committing from positions: the
// assigned ones that moved past what is known committed.
func (cn *Consumer) commitableLocked(positions map[TopicPartition]int64) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for _, tp := range cn.assignment {
		p, ok := positions[tp]
		if !ok || p < 0 {
			continue
		}
		if prev, ok := cn.committed[tp]; ok && p <= prev {
			continue
		}
		out[tp] = p
	}
	return out
}

// autoCommit commits the positions of records returned by earlier polls
// when the interval has passed (or now, when force).
func (cn *Consumer) autoCommit(force bool) error {
	if !cn.cfg.AutoCommit {
		return nil
	}
	cn.mu.Lock()
	if cn.state != "active" || (!force && time.Since(cn.lastCommit) < cn.cfg.AutoCommitInterval) {
		cn.mu.Unlock()
		return nil
	}
	cn.lastCommit = time.Now()
	offsets := cn.commitableLocked(cn.consumed)
	member, gen := cn.memberID, cn.generation
	cn.mu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	ctx, cancel := cn.requestCtx(cn.ctx)
	defer cancel()
	return cn.sendCommit(ctx, member, gen, offsets)
}

// Commit commits the position of every assigned partition: every record
// Poll has returned counts as processed. It returns once the offsets are
// committed in __consumer_offsets, or with why not: a fenced commit (the
// group moved on; the consumer rejoins), a lost request or reply.
func (cn *Consumer) Commit(ctx context.Context) error {
	if err := cn.checkActive(); err != nil {
		return err
	}
	cn.mu.Lock()
	offsets := cn.commitableAll()
	member, gen, epoch := cn.memberID, cn.generation, cn.epoch
	cn.mu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	if err := cn.sendCommit(ctx, member, gen, offsets); err != nil {
		return err
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.epoch == epoch && maps.Equal(offsets, cn.commitableAll()) {
		for tp, off := range offsets {
			cn.consumed[tp] = off
		}
		cn.releaseLocked() // the application says it processed everything it got
	}
	return nil
}

// commitableAll is every assigned position that is known; cn.mu held.
func (cn *Consumer) commitableAll() map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for _, tp := range cn.assignment {
		if p := cn.pos[tp]; p >= 0 {
			out[tp] = p
		}
	}
	return out
}

// checkActive refuses a commit while the consumer is not a member of a
// generation: it gave up its partitions in a rebalance.
func (cn *Consumer) checkActive() error {
	if err := cn.checkUsable(); err != nil {
		return err
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.state != "active" {
		return fmt.Errorf("commit %s for %s: %w: %s gave up its partitions to rejoin the group; what it read since its last commit goes to the partitions' next owners",
			cn.cfg.Group, cn.cfg.ClientID, ErrRebalanceInProgress, cn.cfg.ClientID)
	}
	return nil
}

// CommitOffsets commits the given offsets: for each partition, the offset
// of the next record to read (the last processed one plus one).
func (cn *Consumer) CommitOffsets(ctx context.Context, offsets map[TopicPartition]int64) error {
	if err := cn.checkUsable(); err != nil {
		return err
	}
	if len(offsets) == 0 {
		return fmt.Errorf("%w: %s: commit of no offsets", ErrInvalid, cn.cfg.ClientID)
	}
	for tp, off := range offsets {
		if _, err := cn.c.topicPartition(tp); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if off < 0 {
			return fmt.Errorf("%w: %s: commit %s at offset %d: offsets cannot be negative", ErrInvalid, cn.cfg.ClientID, tp, off)
		}
	}
	if err := cn.checkActive(); err != nil {
		return err
	}
	cn.mu.Lock()
	member, gen := cn.memberID, cn.generation
	cn.mu.Unlock()
	return cn.sendCommit(ctx, member, gen, maps.Clone(offsets))
}

// sendCommit sends one offset commit (an ack request) to the coordinator.
func (cn *Consumer) sendCommit(ctx context.Context, member string, gen int, offsets map[TopicPartition]int64) error {
	cn.mu.Lock()
	coord := cn.coord
	cn.mu.Unlock()
	err := cn.c.coordinatorCall(ctx, cn.cfg.ClientID, cn.cfg.Group, raftnet.RequestAck, &coord, func(co *coordinator) error {
		return co.commit(cn.cfg.ClientID, cn.cfg.Group, member, gen, offsets)
	})
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.coord = coord
	if err != nil {
		if errors.Is(err, ErrFenced) && gen == cn.generation && member == cn.memberID {
			cn.needJoin = true
			select {
			case cn.wake <- struct{}{}:
			default:
			}
		}
		return fmt.Errorf("commit %s for %s: %w", cn.cfg.Group, cn.cfg.ClientID, err)
	}
	if gen == cn.generation && member == cn.memberID {
		for tp, off := range offsets {
			cn.committed[tp] = off
		}
	}
	return nil
}

// Committed returns the group's committed offsets for tps (-1 for none),
// as its coordinator knows them.
func (cn *Consumer) Committed(ctx context.Context, tps ...TopicPartition) (map[TopicPartition]int64, error) {
	if err := cn.checkUsable(); err != nil {
		return nil, err
	}
	return cn.c.committedOffsets(ctx, cn.cfg.ClientID, cn.cfg.Group, tps)
}

func (c *Cluster) committedOffsets(ctx context.Context, client, group string, tps []TopicPartition) (map[TopicPartition]int64, error) {
	var out map[TopicPartition]int64
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	err := c.coordinatorCall(ctx, client, group, raftnet.RequestMetadata, nil, func(co *coordinator) error {
		var err error
		out, err = co.committed(group, tps)
		return err
	})
	return out, err
}
