package broker

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkIdleElections counts the elections a small idle cluster holds
// in a window with nothing failing: the controller, a topic of three
// partitions, a queue and the offsets topic on three nodes, every group
// led once, then left alone. Each election there is one a test did not
// ask for: a leader moved before a scripted kill, an epoch more than the
// script counted. Run it beside a CPU hog to see the preset hold on a busy
// machine:
//
//	stress-ng --cpu 2 & go test ./broker -run '^$' -bench IdleElections -benchtime 1x
//
// MQLAB_IDLE_WINDOW sets the window (15s unless set), MQLAB_IDLE_CLUSTERS
// how many such clusters idle side by side (1 unless set), as parallel
// tests run theirs; elections are counted over all of them.
func BenchmarkIdleElections(b *testing.B) {
	window := 15 * time.Second
	if s := os.Getenv("MQLAB_IDLE_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MQLAB_IDLE_WINDOW=%q: %v; want a duration such as 15s", s, err)
		}
		window = d
	}
	clusters := 1
	if s := os.Getenv("MQLAB_IDLE_CLUSTERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("MQLAB_IDLE_CLUSTERS=%q; want a whole number of clusters, 1 or more", s)
		}
		clusters = n
	}
	var elections, windows int
	for b.Loop() {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range clusters {
			wg.Go(func() {
				n := idleElections(b, window)
				mu.Lock()
				elections += n
				mu.Unlock()
			})
		}
		wg.Wait()
		windows++
	}
	b.ReportMetric(float64(elections)/float64(windows), "elections/window")
}

// idleElections starts the idle scene and counts its elections over
// window. It reports what went wrong rather than stopping the benchmark,
// as it runs beside others on goroutines of its own.
func idleElections(b *testing.B, window time.Duration) int {
	c, err := NewCluster(Config{Nodes: 3, RaftLog: true})
	if err != nil {
		b.Error(err)
		return 0
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.CreateTopic(ctx, TopicConfig{Name: "orders", Partitions: 3}); err != nil {
		b.Error(err)
		return 0
	}
	if err := c.CreateQueue(ctx, QueueConfig{Name: "receipts"}); err != nil {
		b.Error(err)
		return 0
	}
	for p := range 3 {
		if _, err := c.WaitForLeader(ctx, TopicPartition{Topic: "orders", Partition: p}); err != nil {
			b.Error(err)
			return 0
		}
	}
	sub := c.Subscribe(4096)
	defer sub.Close()
	elections := 0
	deadline := time.After(window)
	for {
		select {
		case ev := <-sub.C:
			// Why raft started each election: a leader that lost its
			// lease, or a follower that stopped hearing from its leader.
			if ev.Kind == EventRaftLog && (strings.Contains(ev.Text, "stepping down") || strings.Contains(ev.Text, "heartbeat timeout reached")) {
				b.Logf("%s: %s", ev.Time.Format("15:04:05.000"), ev.Text)
			}
			if ev.Kind == EventLeaderElected {
				elections++
				b.Logf("%s: %s elected on %s at epoch %d", ev.Time.Format("15:04:05.000"), ev.Group, ev.Node, ev.Epoch)
			}
		case <-deadline:
			return elections
		}
	}
}
