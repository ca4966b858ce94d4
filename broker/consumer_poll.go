package broker

// A consumer reading its partitions: Poll, its rate limit, the fetches
// that take turns over the assigned partitions, and the reset policy for a
// position the group has not committed or retention deleted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
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
		cn.mu.Unlock()
		for _, r := range res.Records {
			out = append(out, ConsumerRecord{TopicPartition: tp, Record: r})
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
