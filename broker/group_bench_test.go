package broker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

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
