package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func kafkaClient(t *testing.T, l *Lab, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	k := l.Snapshot().Kafka
	if k == nil {
		t.Fatal("the lab is not listening for Kafka clients")
	}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(strings.Split(k.Bootstrap, ",")...),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RequestTimeoutOverhead(2 * time.Second),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// The checker sees Kafka clients as it sees the lab's: an idempotent kgo
// producer whose reply is lost and whose leader dies, and a kgo group
// that reads everything, one of whose fetch answers is lost. Every record
// is confirmed, none lost, none written twice; the group fetched each,
// and fetched again what the lost answer held: re-fetches, which check
// why lists, not duplicate deliveries.
func TestCheckerSeesKafkaClients(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "kafka listen port=0 auto-create=true")
	if got := l.Snapshot().Kafka; got == nil || strings.Count(got.Bootstrap, ",") != 2 {
		t.Fatalf("the snapshot's Kafka listener is %+v; want three addresses", got)
	}
	p := kafkaClient(t, l, kgo.ClientID("shop"), kgo.DefaultProduceTopic("orders"), kgo.RequiredAcks(kgo.AllISRAcks()))
	const n = 120
	ctx := ctxFor(t, 60*time.Second)
	var wg sync.WaitGroup
	for i := range n {
		switch i {
		case 30:
			mustRun(t, l, "drop next reply to shop")
		case 60:
			mustRun(t, l, "kill leader(orders/0)")
		}
		wg.Add(1)
		p.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "user-%d", i%5), Value: fmt.Appendf(nil, "order %d", i)}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
		if i%10 == 9 {
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	// The consumer joins with its fetches paused; the answer to its
	// first fetch is then lost.
	c := kafkaClient(t, l, kgo.ClientID("billing-1"), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	c.PauseFetchTopics("orders")
	waitFor(t, 20*time.Second, "billing-1 to join its group", func() bool {
		for _, g := range l.Snapshot().Cluster.Groups {
			if g.Group == "billing" && len(g.Members) == 1 {
				return true
			}
		}
		return false
	})
	mustRun(t, l, "drop next reply to billing-1")
	c.ResumeFetchTopics("orders")
	got := 0
	for got < n {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmed != n || rep.Lost != 0 || rep.Unknown != 0 || rep.DuplicateWrites != 0 || rep.DuplicateDeliveries != 0 || rep.OrderViolations != 0 {
		t.Fatalf("report %s; want %d confirmed and no anomaly", rep.Summary(), n)
	}
	// The group's fetches are what the broker sent it, each record once
	// for the group, whatever the client did with them; what the lost
	// answer held was sent again.
	if rep.Fetched != n || len(rep.Ambiguous) != 0 || !firedFor(l, "billing-1") {
		t.Errorf("report %s, ambiguous %+v; want the %d records fetched by billing", rep.Summary(), rep.Ambiguous, n)
	}
	// The lost reply is usually billing-1's first fetch answer, with
	// records in it, which are then sent again; on a busy machine it can
	// be an answer that held none (a fetch that waited out its max wait,
	// the other partition's), and then nothing is sent twice. The
	// checker's own tests hold the rules; here, what was sent again must
	// be listed by check why.
	if lost := firedText(l, "billing-1"); rep.Refetched > 0 {
		res := mustRun(t, l, "check why refetched")
		t.Logf("check why refetched said:\n%s", strings.Join(res[0].Lines, "\n"))
		if said := strings.Join(res[0].Lines, "\n"); !strings.Contains(said, fmt.Sprintf("refetched %d, because:", rep.Refetched)) ||
			!strings.Contains(said, "(group billing, client billing-1): sent again on n") {
			t.Errorf("check why refetched said:\n%s", said)
		}
	} else {
		t.Logf("the lost reply (%s) held no records: nothing was sent again", lost)
	}
	if !firedFor(l, "shop") {
		t.Fatal("the lost reply to shop never fired")
	}
	// The group's member read the log, written before it started, in
	// fetches of many records: most came with the one after them, but no
	// partition's last, which has none after it. The producer, in no
	// group, was handed nothing.
	together := 0
	for p := range 2 {
		for o := range int64(n) {
			if l.HandedTogether("billing-1", "orders", p, o) {
				together++
			}
		}
	}
	if together < n/2 || together > n-2 {
		t.Errorf("billing-1 was handed %d of %d records together with the next one; want most, and not either partition's last", together, n)
	}
	if l.HandedTogether("shop", "orders", 0, 0) {
		t.Error("shop, which fetched nothing, was handed offset 0 of orders/0")
	}
	if st := l.Snapshot().Kafka; len(st.Clients) == 0 {
		t.Fatalf("no Kafka client listed: %+v", st)
	}
}

// firedText is what the first armed fault that bit client says.
func firedText(l *Lab, client string) string {
	for _, e := range l.Snapshot().Timeline {
		if e.Broker != nil && e.Broker.Kind == "fault-fired" && e.Broker.Client == client {
			return e.Text
		}
	}
	return ""
}

func firedFor(l *Lab, client string) bool {
	for _, e := range l.Snapshot().Timeline {
		if e.Broker != nil && e.Broker.Kind == "fault-fired" && e.Broker.Client == client {
			return true
		}
	}
	return false
}

// Without idempotence, a Kafka client's retry after a lost reply writes
// the batch twice, and the checker counts it as it would a lab client's.
func TestCheckerCountsAKafkaClientsDuplicate(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "kafka listen port=0")
	p := kafkaClient(t, l, kgo.ClientID("shop"), kgo.DefaultProduceTopic("orders"), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()))
	ctx := ctxFor(t, 30*time.Second)
	if n := l.OutsideActions(); n != 0 {
		t.Fatalf("before any Kafka client produced, the lab counts %d outside actions", n)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("order 1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if n := l.OutsideActions(); n != 1 {
		t.Fatalf("after a Kafka client's produce the lab counts %d outside actions; want 1", n)
	}
	mustRun(t, l, "drop next reply to shop")
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("order 2")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmed != 2 || rep.DuplicateWrites != 1 || rep.Lost != 0 {
		t.Fatalf("report %s; want 2 confirmed, 1 duplicate write", rep.Summary())
	}
}

// crashable is a dialer whose connections can all be cut at once and
// never made again: a kgo client that crashes without leaving its group.
type crashable struct {
	mu      sync.Mutex
	crashed bool
	conns   []net.Conn
}

func (c *crashable) dial(ctx context.Context, network, host string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return nil, errors.New("crashed")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, host)
	if err == nil {
		c.conns = append(c.conns, nc)
	}
	return nc, err
}

func (c *crashable) crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashed = true
	for _, nc := range c.conns {
		nc.Close()
	}
}

// A group of three kgo consumers committing after their work, one of them
// crashing without leaving and a node killed under them: every record is
// delivered, the group's commits never move backwards, its lag ends at 0,
// and the lab's checker finds nothing lost.
func TestKafkaGroupAcrossConsumerCrashAndNodeKill(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=3", "kafka listen port=0")
	ctx := ctxFor(t, 90*time.Second)
	const n = 300
	p := kafkaClient(t, l, kgo.ClientID("shop"), kgo.DefaultProduceTopic("orders"))
	for i := range n {
		p.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "user-%d", i%13), Value: fmt.Appendf(nil, "order %d", i)}, nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	crash := &crashable{}
	// The consumers poll and commit until the group has caught up: a
	// commit refused in a rebalance is made good by a later one.
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		opts := []kgo.Opt{kgo.ClientID(fmt.Sprintf("billing-%d", i)), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.FetchMaxBytes(2000),
			kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(100 * time.Millisecond), kgo.RebalanceTimeout(3 * time.Second)}
		if i == 2 {
			opts = append(opts, kgo.Dialer(crash.dial))
		}
		c := kafkaClient(t, l, opts...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cctx.Err() == nil {
				pctx, cancel := context.WithTimeout(cctx, 200*time.Millisecond)
				fs := c.PollRecords(pctx, 20)
				cancel()
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)] = true
					mu.Unlock()
				})
				c.CommitUncommittedOffsets(cctx) //nolint:errcheck // a refused commit is made good by a later one
			}
		}()
	}
	defer wg.Wait()
	committed := map[string]int64{}
	watch := func() (lag int64, ok bool) {
		for _, g := range l.Snapshot().Cluster.Groups {
			if g.Group != "billing" {
				continue
			}
			for _, gp := range g.Partitions {
				k := gp.TopicPartition.String()
				if prev, ok := committed[k]; ok && gp.Committed < prev {
					t.Errorf("%s: the group's commit moved back from %d to %d", k, prev, gp.Committed)
				}
				if gp.Committed >= 0 {
					committed[k] = max(committed[k], gp.Committed)
				}
			}
			return g.Lag, true
		}
		return 0, false
	}
	delivered := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	waitFor(t, 30*time.Second, "a tenth of the records delivered", func() bool { watch(); return delivered() > n/10 })
	crash.crash()
	mustRun(t, l, "kill leader(orders/1)")
	waitFor(t, 60*time.Second, "every record delivered and the group's lag at 0", func() bool {
		lag, ok := watch()
		return delivered() == n && ok && lag == 0
	})
	stop()
	rep, err := l.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 0 || rep.Confirmed != n {
		t.Fatalf("report %s; want %d confirmed, none lost", rep.Summary(), n)
	}
	t.Logf("report: %s", rep.Summary())
}

// A cluster command keeps the Kafka listener on: the new cluster listens
// too, and kafka stop then stops it.
func TestKafkaListenerFollowsTheCluster(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "kafka listen port=0")
	res := mustRun(t, l, "cluster nodes=1")
	if k := l.Snapshot().Kafka; k == nil || strings.Contains(k.Bootstrap, ",") {
		t.Fatalf("after the cluster command the Kafka listener is %+v; want one node's address", k)
	}
	if said := strings.Join(res[0].Lines, "\n"); !strings.Contains(said, "Kafka protocol on n1 ") {
		t.Errorf("the cluster command said %q; want the new listener's address", said)
	}
	res = mustRun(t, l, "kafka stop")
	if said := strings.Join(res[0].Lines, "\n"); !strings.Contains(said, "stopped listening") || l.Snapshot().Kafka != nil {
		t.Errorf("kafka stop said %q and left %+v", said, l.Snapshot().Kafka)
	}
}
