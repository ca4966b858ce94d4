package bench

// The consume phase: a group reading the log back.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

// ConsumeResult is one consume phase.
type ConsumeResult struct {
	Rate        Rate
	Partitions  int
	Members     int
	PollRecords int // records per poll, and per commit
	Commits     int
}

// Consume fills a topic of partitions partitions (RF 3) with messages
// of ValueBytes, untimed, then times a group of members consumers
// reading all of it back from the start, polling up to 100 records at a
// time and committing after every poll (each commit an acks=all write to
// __consumer_offsets).
func Consume(ctx context.Context, partitions, members, messages int) (ConsumeResult, error) {
	const pollRecords = 100
	res := ConsumeResult{Partitions: partitions, Members: members, PollRecords: pollRecords}
	c, err := broker.NewCluster(clusterConfig())
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	if err := fillTopic(ctx, c, partitions, messages); err != nil {
		return res, err
	}
	// A fresh bound for the waits of the read: a long fill does not eat it.
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	cns := make([]*broker.Consumer, members)
	defer func() {
		for _, cn := range cns {
			if cn != nil {
				cn.Close()
			}
		}
	}()
	for i := range cns {
		cns[i], err = c.NewConsumer(wctx, broker.ConsumerConfig{ClientID: fmt.Sprintf("bench-%d", i), Group: "bench",
			Topics: []string{benchTopic}, MaxPollRecords: pollRecords})
		if err != nil {
			return res, err
		}
	}
	if err := probe.Poll(wctx, func() bool { return groupStable(c, "bench", cns) }); err != nil {
		return res, fmt.Errorf("group of %d never stable: %w", members, err)
	}
	res.Rate, res.Commits, err = readBack(ctx, wctx, cns, messages)
	return res, err
}

// fillTopic creates the bench topic and writes messages of ValueBytes to
// it, acks=all, untimed.
func fillTopic(ctx context.Context, c *broker.Cluster, partitions, messages int) error {
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: benchTopic, Partitions: partitions, RF: Nodes, SegmentBytes: segmentBytes()}); err != nil {
		return err
	}
	p, err := c.NewProducer(wctx, broker.ProducerConfig{ClientID: "bench-producer", Acks: broker.AcksAll, BatchSize: 500})
	if err != nil {
		return err
	}
	value := make([]byte, ValueBytes)
	for done := 0; done < messages; {
		msgs := make([]broker.Message, min(messages-done, 15000))
		for i := range msgs {
			msgs[i] = broker.Message{Topic: benchTopic, Value: value}
		}
		for _, r := range p.Produce(ctx, msgs...) {
			if r.Outcome != broker.OutcomeAcked {
				return fmt.Errorf("fill: %v: %w", r.Outcome, r.Err)
			}
		}
		done += len(msgs)
	}
	return nil
}

// readBack times the group's members polling and committing until they
// have read messages records between them, or wctx ends.
func readBack(ctx, wctx context.Context, cns []*broker.Consumer, messages int) (Rate, int, error) {
	var got, commits atomic.Int64
	var ferr firstErr
	all := make(chan struct{})
	var once sync.Once
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	var elapsed, cpu time.Duration
	for _, cn := range cns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				recs, err := cn.Poll(cctx)
				if err != nil || len(recs) == 0 {
					continue // a rebalance or an empty poll: poll again
				}
				if err := cn.Commit(cctx); err != nil && cctx.Err() == nil {
					ferr.set(fmt.Errorf("commit: %w", err))
					once.Do(func() { close(all) })
					return
				}
				commits.Add(1)
				if got.Add(int64(len(recs))) >= int64(messages) {
					once.Do(func() {
						elapsed, cpu = time.Since(start), processCPU()-cpu0
						close(all)
					})
				}
			}
		}()
	}
	select {
	case <-all:
	case <-wctx.Done():
		ferr.set(fmt.Errorf("read %d of %d messages: %w", got.Load(), messages, wctx.Err()))
	}
	stop()
	wg.Wait()
	if err := ferr.get(); err != nil {
		return Rate{}, 0, err
	}
	return Rate{Messages: int(got.Load()), Elapsed: elapsed, CPU: cpu}, int(commits.Load()), nil
}

// groupStable reports whether group is stable with exactly these members,
// each active in the group's current generation.
func groupStable(c *broker.Cluster, group string, cns []*broker.Consumer) bool {
	for _, g := range c.SnapshotWindow(0).Groups {
		if g.Group != group {
			continue
		}
		if g.State != "stable" || len(g.Members) != len(cns) {
			return false
		}
		for _, cn := range cns {
			if cn.Generation() != g.Generation || cn.State() != "active" {
				return false
			}
		}
		return true
	}
	return false
}
