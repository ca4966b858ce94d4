package bench

// The failover phase: kill the leader, time the next acknowledged write.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/internal/probe"
)

// FailoverResult is one failover series.
type FailoverResult struct {
	ET      []float64       // leader killed → next acknowledged write, in election timeouts, sorted
	Took    []time.Duration // the same in wall time, in kill order
	Kills   []time.Duration // how long Kill itself took, in kill order
	Timeout time.Duration   // the election timeout
}

// Min, Median, P90 and Max summarise the series in election timeouts.
func (f FailoverResult) Min() float64    { return f.ET[0] }
func (f FailoverResult) Median() float64 { return medianOf(f.ET) }
func (f FailoverResult) P90() float64    { return f.ET[len(f.ET)*9/10] }
func (f FailoverResult) Max() float64    { return f.ET[len(f.ET)-1] }

// Mean is the mean time from kill to acknowledged write.
func (f FailoverResult) Mean() time.Duration {
	var sum time.Duration
	for _, d := range f.Took {
		sum += d
	}
	return sum / time.Duration(len(f.Took))
}

// Failover kills the leader of a one-partition topic (RF 3) kills
// times and measures, from just before each kill until an acks=all write
// of an idempotent producer is acknowledged by the new leader, in election
// timeouts. After each kill the node is restarted and the partition must
// converge before the next kill. backoff, when not zero, fixes the
// producer's retry backoff (a small one keeps the client's waiting out of
// the figure); zero keeps the producer's defaults (a tenth of a heartbeat
// timeout, doubling up to one). each, when set, hears every sample.
func Failover(ctx context.Context, kills int, backoff time.Duration, each func(i int, et float64)) (FailoverResult, error) {
	res := FailoverResult{Timeout: broker.FastTiming.ElectionTimeout}
	c, err := broker.NewCluster(clusterConfig())
	if err != nil {
		return res, fmt.Errorf("start cluster: %w", err)
	}
	defer c.Close()
	tp := broker.TopicPartition{Topic: "failover", Partition: 0}
	wctx, cancel := context.WithTimeout(ctx, benchWait)
	defer cancel()
	if err := c.CreateTopic(wctx, broker.TopicConfig{Name: tp.Topic, Partitions: 1, RF: Nodes, SegmentBytes: segmentBytes()}); err != nil {
		return res, err
	}
	p, err := c.NewProducer(wctx, broker.ProducerConfig{ClientID: "bench-failover", Acks: broker.AcksAll, Idempotent: true,
		RetryBackoff: backoff, RetryBackoffMax: backoff})
	if err != nil {
		return res, err
	}
	res.Timeout = c.Timing().ElectionTimeout
	for i := range kills {
		if err := func() error {
			kctx, cancel := context.WithTimeout(ctx, benchWait)
			defer cancel()
			leader, err := c.WaitForLeader(kctx, tp)
			if err != nil {
				return err
			}
			m := broker.Message{Topic: tp.Topic, Value: fmt.Appendf(nil, "before kill %d", i)}
			before := p.Produce(kctx, m)[0]
			if before.Outcome != broker.OutcomeAcked {
				return fmt.Errorf("write before the kill: %v: %w", before.Outcome, before.Err)
			}
			start := time.Now()
			if err := c.Kill(leader); err != nil {
				return err
			}
			killed := time.Since(start)
			m.Value = fmt.Appendf(nil, "after kill %d", i)
			after := p.Produce(kctx, m)[0]
			took := time.Since(start)
			if after.Outcome != broker.OutcomeAcked || after.Epoch <= before.Epoch {
				return fmt.Errorf("write after killing %s: %v at epoch %d (before: %d), %d attempts: %v",
					leader, after.Outcome, after.Epoch, before.Epoch, after.Attempts, after.Err)
			}
			et := float64(took) / float64(res.Timeout)
			res.ET = append(res.ET, et)
			res.Took = append(res.Took, took)
			res.Kills = append(res.Kills, killed)
			if each != nil {
				each(i, et)
			}
			if err := c.Restart(leader); err != nil {
				return fmt.Errorf("restart %s: %w", leader, err)
			}
			if err := probe.Poll(kctx, func() bool { return benchConverged(c, tp) }); err != nil {
				return fmt.Errorf("replicas did not converge after restarting %s: %w", leader, err)
			}
			return nil
		}(); err != nil {
			return res, fmt.Errorf("kill %d: %w", i+1, err)
		}
	}
	slices.Sort(res.ET)
	return res, nil
}

// benchConverged reports whether every replica of tp is up and has written
// and committed exactly what the others have, under a leader ready to
// serve.
func benchConverged(c *broker.Cluster, tp broker.TopicPartition) bool {
	lead := probe.Of(c).LeaderOf(tp.String())
	if lead == nil || !lead.ReadyLeader() {
		return false
	}
	var p broker.PartitionState
	for _, t := range c.SnapshotWindow(0).Topics {
		for _, q := range t.Partitions {
			if q.Topic == tp.Topic && q.Partition == tp.Partition {
				p = q
			}
		}
	}
	if len(p.Replicas) != Nodes {
		return false
	}
	for _, r := range p.Replicas {
		if !r.Up || r.Role == "candidate" || r.LogEnd != r.HighWatermark || r.HighWatermark != p.Replicas[0].HighWatermark {
			return false
		}
	}
	return true
}
