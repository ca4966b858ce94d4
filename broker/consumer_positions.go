package broker

// A consumer's positions in its partitions: reading records from them
// (Poll, its rate limit, the fetches that take turns over the assigned
// partitions, and the reset policy for a position the group has not
// committed or retention deleted), moving them (Seek…), and committing
// them.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mqlab/mqlab/broker/raftnet"
)

// Poll returns committed records (below the high-water mark) of the
// assigned partitions from the consumer's positions, at most
// MaxPollRecords and no faster than MaxRecordsPerSecond. With nothing to
// read it waits up to PollTimeout and returns none. Calling Poll marks the
// records of earlier polls as processed for auto-commit.
func (cn *Consumer) Poll(ctx context.Context) ([]ConsumerRecord, error) {
	cn.pollMu.Lock()
	defer cn.pollMu.Unlock()
	if err := cn.checkUsable(); err != nil {
		return nil, err
	}
	cn.mu.Lock()
	for tp, p := range cn.pos {
		if p >= 0 {
			cn.consumed[tp] = p
		}
	}
	cn.releaseLocked()
	cn.mu.Unlock()
	if err := cn.autoCommit(false); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	pctx, cancel := context.WithTimeout(ctx, cn.cfg.PollTimeout)
	defer cancel()
	idle := min(max(cn.c.timing.CommitTimeout*2, 2*time.Millisecond), 50*time.Millisecond)
	for {
		limit := cn.cfg.MaxPollRecords
		if cn.cfg.MaxRecordsPerSecond > 0 {
			n, err := cn.waitTokens(pctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, nil
			}
			limit = min(limit, n)
		}
		recs := cn.fetch(pctx, limit)
		if len(recs) > 0 {
			if cn.cfg.MaxRecordsPerSecond > 0 {
				cn.mu.Lock()
				cn.tokens -= float64(len(recs))
				cn.mu.Unlock()
			}
			return recs, nil
		}
		if err := cn.checkUsable(); err != nil {
			return nil, err
		}
		t := time.NewTimer(idle)
		select {
		case <-pctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, nil
		case <-t.C:
		}
	}
}

// The rate limit is a token bucket. burst is its size, half a second's
// worth (at least one record): a consumer held up briefly catches up
// instead of losing its share. batch is how many tokens a Poll waits for,
// a tenth of a second's worth, so a capped consumer polls about ten times
// a second rather than once per record.
func (cn *Consumer) burst() float64 { return max(1, cn.cfg.MaxRecordsPerSecond/2) }

func (cn *Consumer) batch() float64 {
	return min(max(1, cn.cfg.MaxRecordsPerSecond/10), float64(cn.cfg.MaxPollRecords), cn.burst())
}

// waitTokens waits until the rate limit allows a batch and returns how
// many records it allows now.
func (cn *Consumer) waitTokens(ctx context.Context) (int, error) {
	rate := cn.cfg.MaxRecordsPerSecond
	for {
		cn.mu.Lock()
		now := time.Now()
		cn.tokens = min(cn.burst(), cn.tokens+now.Sub(cn.refilled).Seconds()*rate)
		cn.refilled = now
		have := cn.tokens
		cn.mu.Unlock()
		if have >= cn.batch() {
			return int(have), nil
		}
		t := time.NewTimer(time.Duration((cn.batch() - have) / rate * float64(time.Second)))
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// fetch reads up to limit records from the assigned partitions, taking
// turns so that every partition gets read.
func (cn *Consumer) fetch(ctx context.Context, limit int) []ConsumerRecord {
	cn.mu.Lock()
	tps := slices.Clone(cn.assignment)
	epoch := cn.epoch
	start := cn.rr
	cn.rr++
	cn.mu.Unlock()
	var out []ConsumerRecord
	for k := range tps {
		if len(out) >= limit || ctx.Err() != nil {
			break
		}
		tp := tps[(start+k)%len(tps)]
		cn.mu.Lock()
		pos, ok := cn.pos[tp]
		cn.mu.Unlock()
		if !ok {
			continue
		}
		if pos < 0 {
			var err error
			if pos, err = cn.reset(ctx, tp, epoch, "the group has no committed offset for it"); err != nil {
				continue
			}
			if cn.cfg.ResetPolicy == ResetLatest {
				// Record where the group starts, so that its lag counts from
				// there and not from the records it chose to skip. If this
				// commit fails the next one covers it.
				_ = cn.CommitOffsets(ctx, map[TopicPartition]int64{tp: pos})
			}
		}
		res, err := cn.c.Fetch(ctx, cn.cfg.ClientID, tp, pos, limit-len(out))
		if errors.Is(err, ErrOffsetOutOfRange) {
			cn.reset(ctx, tp, epoch, fmt.Sprintf("offset %d is outside the log (%v)", pos, err))
			continue
		}
		if err != nil || len(res.Records) == 0 {
			continue
		}
		cn.mu.Lock()
		if cn.epoch != epoch || cn.pos[tp] != pos || cn.revoking {
			cn.mu.Unlock()
			return out // a rebalance or a seek moved the position meanwhile
		}
		cn.pos[tp] = res.Records[len(res.Records)-1].Offset + 1
		cn.delivered = true
		gen := cn.generation
		cn.mu.Unlock()
		for _, r := range res.Records {
			out = append(out, ConsumerRecord{TopicPartition: tp, Record: r, Generation: gen})
		}
	}
	return out
}

// reset applies the reset policy to tp and reports it as an event.
func (cn *Consumer) reset(ctx context.Context, tp TopicPartition, epoch uint64, why string) (int64, error) {
	start, hwm, err := cn.c.Offsets(ctx, cn.cfg.ClientID, tp)
	if err != nil {
		return 0, err
	}
	to := start
	if cn.cfg.ResetPolicy == ResetLatest {
		to = hwm
	}
	cn.mu.Lock()
	if cn.epoch != epoch {
		cn.mu.Unlock()
		return 0, fmt.Errorf("%s moved while resetting", tp)
	}
	cn.pos[tp] = to
	cn.mu.Unlock()
	cn.c.events.emit(Event{Kind: EventOffsetReset, Client: cn.cfg.ClientID, ConsumerGroup: cn.cfg.Group, Group: tp.String(), To: to,
		Text: fmt.Sprintf("%s starts %s at %d (reset to %s): %s", cn.cfg.ClientID, tp, to, cn.cfg.ResetPolicy, why)})
	return to, nil
}

// Moving the positions: to an offset, the log start, the high-water mark,
// or a time.

// Seek moves the position on an assigned partition; the next Poll reads
// from offset. The offset must be in the retained log: from the log start
// up to the high-water mark (reading there waits for new records).
func (cn *Consumer) Seek(ctx context.Context, tp TopicPartition, offset int64) error {
	if err := cn.checkUsable(); err != nil {
		return err
	}
	if _, err := cn.c.topicPartition(tp); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	if offset < 0 {
		return fmt.Errorf("%w: seek %s to %d: offsets cannot be negative", ErrInvalid, tp, offset)
	}
	start, hwm, err := cn.c.Offsets(ctx, cn.cfg.ClientID, tp)
	if err != nil {
		return fmt.Errorf("seek %s: %w", tp, err)
	}
	if offset > hwm {
		return fmt.Errorf("seek %s to %d: %w: beyond the log end; the log holds %d–%d and the next record will be %d", tp, offset, ErrOffsetOutOfRange, start, hwm-1, hwm)
	}
	if offset < start {
		return fmt.Errorf("seek %s to %d: %w: below the log start %d; retention deleted it", tp, offset, ErrOffsetOutOfRange, start)
	}
	return cn.setPosition(tp, offset)
}

func (cn *Consumer) setPosition(tp TopicPartition, offset int64) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if _, ok := cn.pos[tp]; !ok {
		return fmt.Errorf("%w: seek %s: not assigned to %s, whose partitions are %s", ErrInvalid, tp, cn.cfg.ClientID, tpList(cn.assignment))
	}
	cn.pos[tp] = offset
	delete(cn.committed, tp) // a seek back may be committed
	cn.epoch++
	return nil
}

// SeekToBeginning moves to the log start of the given partitions (all
// assigned ones when none are named): a replay of the retained log.
func (cn *Consumer) SeekToBeginning(ctx context.Context, tps ...TopicPartition) error {
	return cn.seekEach(ctx, tps, func(tp TopicPartition) (int64, error) {
		start, _, err := cn.c.Offsets(ctx, cn.cfg.ClientID, tp)
		return start, err
	})
}

// SeekToEnd moves to the high-water mark of the given partitions (all
// assigned ones when none are named): only new records.
func (cn *Consumer) SeekToEnd(ctx context.Context, tps ...TopicPartition) error {
	return cn.seekEach(ctx, tps, func(tp TopicPartition) (int64, error) {
		_, hwm, err := cn.c.Offsets(ctx, cn.cfg.ClientID, tp)
		return hwm, err
	})
}

// SeekToTime moves to the first record with a timestamp at or after t,
// found through the partition's time index; with none that new, to the
// high-water mark.
func (cn *Consumer) SeekToTime(ctx context.Context, tp TopicPartition, t time.Time) error {
	return cn.seekEach(ctx, []TopicPartition{tp}, func(tp TopicPartition) (int64, error) {
		off, _, err := cn.c.OffsetForTime(ctx, cn.cfg.ClientID, tp, t)
		return off, err
	})
}

func (cn *Consumer) seekEach(ctx context.Context, tps []TopicPartition, where func(TopicPartition) (int64, error)) error {
	if err := cn.checkUsable(); err != nil {
		return err
	}
	if len(tps) == 0 {
		tps = cn.Assignment()
	}
	for _, tp := range tps {
		if _, err := cn.c.topicPartition(tp); err != nil {
			return fmt.Errorf("seek: %w", err)
		}
		off, err := where(tp)
		if err != nil {
			return fmt.Errorf("seek %s: %w", tp, err)
		}
		if err := cn.setPosition(tp, off); err != nil {
			return err
		}
	}
	return nil
}

// Committing the positions: automatic and explicit commits, the checks
// before them, the request to the coordinator, and reading back what the
// group has committed.

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
	return cn.commitOffsets(ctx, -1, offsets)
}

// commitOffsets is CommitOffsets in generation (-1: the current one).
func (cn *Consumer) commitOffsets(ctx context.Context, generation int, offsets map[TopicPartition]int64) error {
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
	if generation >= 0 && generation != gen {
		return fmt.Errorf("commit %s for %s: %w: %w: its records were fetched in generation %d and the group is in generation %d now, which reads them again from the last commit",
			cn.cfg.Group, cn.cfg.ClientID, ErrFenced, ErrStaleGeneration, generation, gen)
	}
	// The generation may move on before the coordinator sees the commit:
	// it then refuses the generation this commit names.
	return cn.sendCommit(ctx, member, gen, maps.Clone(offsets))
}

// CommitFetched commits offsets for records fetched in generation (their
// ConsumerRecord.Generation). If the group has moved to a newer
// generation since, the commit is refused (ErrFenced), as a Kafka
// coordinator refuses a commit from an older generation: in an eager
// rebalance the new generation starts every partition from the group's
// last commit, so it reads these records again, even on a partition that
// stayed with the same member. Committing them now would move the
// group's offset past records the new generation is about to read.
func (cn *Consumer) CommitFetched(ctx context.Context, generation int, offsets map[TopicPartition]int64) error {
	return cn.commitOffsets(ctx, generation, offsets)
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
