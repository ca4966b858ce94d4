package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/broker/raftnet"
)

// Record is a committed record as a reader sees it.
type Record struct {
	Offset    int64
	Epoch     uint64
	Timestamp time.Time
	Key       []byte
	Value     []byte
	MsgID     string
	Headers   []Header // a Kafka client's record headers
}

// Header is one record header, as a Kafka client sent it.
type Header = partlog.Header

// FetchResult is a leader's answer to a read.
type FetchResult struct {
	Records       []Record
	HighWatermark int64 // the next offset to be committed
	LogStart      int64
	Leader        string
	Epoch         uint64
	// File is the segment file's bytes a FetchFile serves, nil when it
	// read records instead.
	File *FileRange
}

// FileRange is whole record batches of a segment file, as a fetch serves
// them.
type FileRange = partlog.FileRange

func (r *FetchResult) closeFile() {
	if r.File != nil {
		r.File.File.Close()
		r.File = nil
	}
}

func toRecord(r partlog.Record) Record {
	return Record{Offset: r.Offset, Epoch: r.Epoch, Timestamp: time.Unix(0, r.Timestamp), Key: r.Key, Value: r.Value, MsgID: r.MsgID, Headers: r.Headers}
}

// Fetch reads up to max committed records of a partition from offset, on
// behalf of client, from the partition's leader. Reading at the high-water
// mark returns no records; below the log start or past the high-water mark
// is an error wrapping ErrOffsetOutOfRange. Not-leader answers are retried
// until the request timeout.
func (c *Cluster) Fetch(ctx context.Context, client string, tp TopicPartition, offset int64, max int) (FetchResult, error) {
	if _, err := c.topicPartition(tp); err != nil {
		return FetchResult{}, fmt.Errorf("fetch: %w", err)
	}
	if max < 1 {
		return FetchResult{}, fmt.Errorf("%w: fetch %s: max records %d; want at least 1", ErrInvalid, tp, max)
	}
	var out FetchResult
	err := c.onLeader(ctx, client, tp, raftnet.RequestData, func(rep *replica) error {
		var err error
		out, err = rep.read(offset, max)
		return err
	})
	return out, err
}

// read reads up to max committed records from offset on this leader. An
// offset outside the log is an answer that makes a consumer reset its
// position, so it is given only by a leader that proves it still leads: a
// leader cut off from the others believes it leads until its lease runs
// out, while its successor commits records past its high-water mark, and
// a consumer that has read those would be sent back to the log start.
func (rep *replica) read(offset int64, max int) (FetchResult, error) {
	f := rep.partition()
	f.mu.RLock()
	l := f.log
	out := FetchResult{HighWatermark: l.EndOffset(), LogStart: l.StartOffset(), Leader: rep.node, Epoch: rep.raft().CurrentTerm()}
	recs, err := l.Read(offset, max)
	if err == nil {
		out.Records = make([]Record, len(recs))
		for i, r := range recs {
			out.Records[i] = toRecord(r)
		}
	}
	f.mu.RUnlock()
	if err == nil {
		if r := rep.raft(); r != nil && r.LastIndex() > r.AppliedIndex() && rep.logEnd() > out.HighWatermark {
			rep.heldBack.Add(1) // records it wrote but has not committed: the reader gets none of them
		}
		return out, nil
	}
	if err := rep.unprovenOutOfRange(err); err != nil {
		return FetchResult{}, err
	}
	return out, fmt.Errorf("fetch %s: %w", rep.group, err)
}

// unprovenOutOfRange returns an error when err, from a read, says the offset
// is outside the log and this replica cannot show it still leads: then
// the reader should ask the new leader.
func (rep *replica) unprovenOutOfRange(err error) error {
	if errors.Is(err, ErrOffsetOutOfRange) {
		return rep.verifyLeader()
	}
	return nil
}

// verifyLeader confirms that this replica still leads: a majority takes
// a raft barrier it writes in its term. Raft's VerifyLeader would not do:
// it counts heartbeat answers that were under way before it was asked, and
// on a slow network such an answer can come from a follower that has since
// voted for another leader.
func (rep *replica) verifyLeader() error {
	if err := rep.wait(rep.raft().Barrier(rep.c.requestTimeout())); err != nil {
		return fmt.Errorf("%w: %s on %s no longer leads it (%v)", ErrNotLeader, rep.group, rep.node, err)
	}
	return nil
}

// OffsetForTime returns the offset of the partition's first committed
// record with a timestamp at or after t, looked up through the segments'
// time indexes; ok is false when every record is older (the caller then
// reads from the high-water mark, as Kafka does).
func (c *Cluster) OffsetForTime(ctx context.Context, client string, tp TopicPartition, t time.Time) (offset int64, ok bool, err error) {
	if _, err := c.topicPartition(tp); err != nil {
		return 0, false, fmt.Errorf("offset for time: %w", err)
	}
	err = c.onLeader(ctx, client, tp, raftnet.RequestMetadata, func(rep *replica) error {
		f := rep.partition()
		f.mu.RLock()
		defer f.mu.RUnlock()
		offset, ok = f.log.OffsetForTime(t.UnixNano())
		if !ok {
			offset = f.log.EndOffset()
		}
		return nil
	})
	return offset, ok, err
}

// Offsets returns the partition's log start and high-water mark.
func (c *Cluster) Offsets(ctx context.Context, client string, tp TopicPartition) (logStart, hwm int64, err error) {
	if _, err := c.topicPartition(tp); err != nil {
		return 0, 0, fmt.Errorf("offsets: %w", err)
	}
	err = c.onLeader(ctx, client, tp, raftnet.RequestMetadata, func(rep *replica) error {
		logStart, hwm, _ = rep.partition().state()
		return nil
	})
	return logStart, hwm, err
}

// onLeader runs fn on the partition's ready leader, across the network,
// retrying not-leader answers until the request timeout.
func (c *Cluster) onLeader(ctx context.Context, client string, tp TopicPartition, kind raftnet.RequestKind, fn func(*replica) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	group := tp.String()
	for {
		var err error
		lead := c.leaderOf(group)
		if lead == nil {
			err = fmt.Errorf("%w for %s", ErrNoLeader, group)
		} else {
			err = c.net.Call(ctx, client, lead.node, kind, func() error {
				rep := c.replicaOn(lead.node, group)
				if rep == nil || !rep.readyLeader() {
					return fmt.Errorf("%w: %s on %s is not a ready leader", ErrNotLeader, group, lead.node)
				}
				return fn(rep)
			})
		}
		retry := errors.Is(err, ErrNotLeader) || errors.Is(err, ErrNoLeader) || errors.Is(err, raftnet.ErrUnreachable)
		if !retry {
			return err
		}
		if e := poll(ctx, func() bool { l := c.leaderOf(group); return l != nil && l.readyLeader() && l != lead }); e != nil {
			return fmt.Errorf("%w (gave up after %v)", err, c.requestTimeout())
		}
	}
}
