package broker

// A consumer moving its positions: to an offset, the log start, the
// high-water mark, or a time.

import (
	"context"
	"fmt"
	"time"
)

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
