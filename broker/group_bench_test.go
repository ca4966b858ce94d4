package broker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkConsume measures consuming from a 3-node cluster with RF 3: a
// group reads b.N records of 100 bytes from a 3-partition topic, polling
// 100 records at a time and committing after every poll (a commit every
// 100 records, each an acks=all write to __consumer_offsets). The records
// are produced before the timer starts.
func BenchmarkConsume(b *testing.B) {
	for _, consumers := range []int{1, 3} {
		b.Run(fmt.Sprintf("consumers=%d", consumers), func(b *testing.B) {
			b.StopTimer()
			c := newTestCluster(b, 3)
			mustCreate(b, c, TopicConfig{Name: "bench", Partitions: 3, RF: 3})
			p := mustProducer(b, c, ProducerConfig{ClientID: "bench-producer", Acks: AcksAll, BatchSize: 500})
			value := make([]byte, 100)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			for done := 0; done < b.N; {
				n := min(b.N-done, 15000)
				msgs := make([]Message, n)
				for i := range msgs {
					msgs[i] = Message{Topic: "bench", Value: value}
				}
				for _, r := range p.Produce(ctx, msgs...) {
					if r.Outcome != OutcomeAcked {
						b.Fatalf("produce: %v %v", r.Outcome, r.Err)
					}
				}
				done += n
			}
			cns := make([]*Consumer, consumers)
			for i := range cns {
				cns[i] = mustConsumer(b, c, ConsumerConfig{ClientID: fmt.Sprintf("bench-%d", i), Group: "bench", Topics: []string{"bench"}, MaxPollRecords: 100})
			}
			waitStable(b, c, "bench", cns...)
			got := make(chan int, consumers)
			commits := make(chan int, consumers)
			cctx, stop := context.WithCancel(ctx)
			b.ResetTimer()
			b.StartTimer()
			start := time.Now()
			for _, cn := range cns {
				go func() {
					n, k := 0, 0
					for cctx.Err() == nil {
						recs, err := cn.Poll(cctx)
						if err != nil || len(recs) == 0 {
							continue
						}
						if err := cn.Commit(cctx); err != nil && cctx.Err() == nil {
							b.Errorf("commit: %v", err)
						}
						k++
						n += len(recs)
						got <- len(recs)
					}
					commits <- k
				}()
			}
			for total := 0; total < b.N; {
				total += <-got
			}
			elapsed := time.Since(start)
			b.StopTimer()
			stop()
			nCommits := 0
			for range cns {
				for {
					select {
					case <-got:
						continue
					case k := <-commits:
						nCommits += k
					}
					break
				}
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(b.N)*100/elapsed.Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(nCommits), "commits")
		})
	}
}

// BenchmarkRebalance measures, in session timeouts, how long a group of two
// takes to be stable again with all three members when a third joins (the
// others learn of it from their next heartbeat, every third of a session,
// and rejoin) and with two when one dies (Crash: the coordinator notices
// only when its session runs out, then the survivors rejoin).
func BenchmarkRebalance(b *testing.B) {
	const rounds = 8
	b.StopTimer()
	c := newTestCluster(b, 3)
	mustCreate(b, c, TopicConfig{Name: "orders", Partitions: 6})
	session := c.groups.session
	cfg := func(id string) ConsumerConfig {
		return ConsumerConfig{ClientID: id, Group: "billing", Topics: []string{"orders"}}
	}
	a := mustConsumer(b, c, cfg("a"))
	bb := mustConsumer(b, c, cfg("b"))
	waitStable(b, c, "billing", a, bb)
	stableWith := func(n, after int) bool {
		co := c.groups.active()[c.CoordinatorPartition("billing").Partition]
		if co == nil {
			return false
		}
		g, ok := co.describe("billing")
		return ok && string(g.State) == "stable" && len(g.Members) == n && g.Generation > after
	}
	var joins, deaths []float64
	for i := range rounds {
		// Start each join at a random point of the members' heartbeat cycle:
		// right after a rebalance their heartbeats are all in phase with it.
		phase := time.NewTimer(time.Duration(rand.Int64N(int64(session / 3))))
		<-phase.C
		gen := a.Generation()
		b.StartTimer()
		start := time.Now()
		third := mustConsumer(b, c, cfg(fmt.Sprintf("c%d", i)))
		waitFor(b, 30*time.Second, "the join to complete", func() bool { return stableWith(3, gen) })
		joins = append(joins, float64(time.Since(start))/float64(session))
		b.StopTimer()
		waitStable(b, c, "billing", a, bb, third)

		phase = time.NewTimer(time.Duration(rand.Int64N(int64(session / 3))))
		<-phase.C
		gen = a.Generation()
		b.StartTimer()
		start = time.Now()
		third.Crash()
		waitFor(b, 30*time.Second, "the death to be noticed", func() bool { return stableWith(2, gen) })
		deaths = append(deaths, float64(time.Since(start))/float64(session))
		b.StopTimer()
		waitStable(b, c, "billing", a, bb)
	}
	report := func(name string, xs []float64) {
		slices.Sort(xs)
		median := (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
		b.Logf("%s: %d rounds, session %v: min %.2f, median %.2f, max %.2f session timeouts", name, len(xs), session, xs[0], median, xs[len(xs)-1])
		b.ReportMetric(xs[0], name+"-min-sessions")
		b.ReportMetric(median, name+"-median-sessions")
		b.ReportMetric(xs[len(xs)-1], name+"-max-sessions")
	}
	report("join", joins)
	report("death", deaths)
}
