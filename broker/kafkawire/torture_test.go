package kafkawire

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mqlab/mqlab/broker"
)

// The torture test's Kafka mode: kgo clients — two idempotent acks=all
// producers and a group of two consumers — against the listener, under a
// random fault schedule per seed (kills and restarts, isolation, slow
// nodes, lost replies). After a heal, every acknowledged record must be in
// the log, none twice, each key's records in the order they were sent.
//
//	go test ./broker/kafkawire -run TestTortureKgo -torture.seeds=10 -torture.messages=1000
var (
	kgoSeeds    = flag.Int("torture.seeds", tortureSeeds, "torture: how many seeds to run (seeds 1…N)")
	kgoSeed     = flag.Uint64("torture.seed", 0, "torture: replay this one seed")
	kgoMessages = flag.Int("torture.messages", 300, "torture: records produced per seed and producer")
)

func TestTortureKgo(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	seeds := []uint64{*kgoSeed}
	if *kgoSeed == 0 {
		seeds = seeds[:0]
		for s := 1; s <= *kgoSeeds; s++ {
			seeds = append(seeds, uint64(s))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { tortureKgo(t, seed, *kgoMessages) })
	}
}

func tortureKgo(t *testing.T, seed uint64, n int) {
	l := newLab(t, 3, broker.TopicConfig{Name: "orders", Partitions: 2})
	rng := rand.New(rand.NewPCG(seed, 0x6b676f))
	ctx := ctxFor(t, 3*time.Minute)
	var mu sync.Mutex
	acked := map[string]bool{}
	var script []string

	var produced sync.WaitGroup
	for p := range 2 {
		name := fmt.Sprintf("shop-%d", p+1)
		cl := l.client(t, kgo.ClientID(name), kgo.DefaultProduceTopic("orders"), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerLinger(2*time.Millisecond), kgo.RecordDeliveryTimeout(time.Minute))
		produced.Add(1)
		go func() {
			defer produced.Done()
			var inflight sync.WaitGroup
			for i := range n {
				v := fmt.Sprintf("%s/k%d/%d", name, i%7, i)
				inflight.Add(1)
				cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "%s-k%d", name, i%7), Value: []byte(v)}, func(_ *kgo.Record, err error) {
					defer inflight.Done()
					if err == nil {
						mu.Lock()
						acked[v] = true
						mu.Unlock()
					}
				})
				time.Sleep(time.Millisecond)
			}
			inflight.Wait()
		}()
	}
	for c := range 2 {
		cl := l.client(t, kgo.ClientID(fmt.Sprintf("billing-%d", c+1)), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(2*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
		go func() {
			for ctx.Err() == nil {
				cl.PollFetches(ctx)
			}
		}()
	}

	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		nodes := l.c.Nodes()
		for k := 0; k < 8 && ctx.Err() == nil; k++ {
			time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
			node := nodes[rng.IntN(len(nodes))]
			var cmd string
			var err error
			switch rng.IntN(5) {
			case 0:
				cmd, err = "kill "+node, l.c.Kill(node)
				time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
				l.c.Restart(node) //nolint:errcheck // it may be up again already
				cmd += "; restart " + node
			case 1:
				cmd, err = "isolate "+node, l.c.Isolate(node)
				time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
				l.c.Heal()
				cmd += "; heal"
			case 2:
				cmd, err = "slow "+node+" 20ms", l.c.Slow(node, 20*time.Millisecond)
			case 3:
				client := fmt.Sprintf("shop-%d", 1+rng.IntN(2))
				cmd, err = "drop next reply to "+client, l.c.DropNextReply(client)
			case 4:
				cmd, err = "drop next ack from billing-1", l.c.DropNextAck("billing-1")
			}
			mu.Lock()
			script = append(script, fmt.Sprintf("%s: %s (%v)", time.Now().Format("05.000"), cmd, err))
			mu.Unlock()
		}
		l.c.Heal()
		for _, id := range nodes {
			l.c.Restart(id) //nolint:errcheck // most are up
		}
	}()
	produced.Wait()
	<-faultsDone

	seen := map[string]int{}
	for p := range 2 {
		tp := broker.TopicPartition{Topic: "orders", Partition: p}
		last := map[string]int{}
		for off := int64(0); ; {
			res, err := l.c.Fetch(ctx, "check", tp, off, 1000)
			if err != nil && ctx.Err() == nil {
				l.c.WaitForLeader(ctx, tp) //nolint:errcheck // the fetch tries again, until the test's deadline
				continue
			}
			if err != nil {
				t.Fatalf("seed %d: read %s: %v", seed, tp, err)
			}
			for _, r := range res.Records {
				v := string(r.Value)
				seen[v]++
				f := strings.Split(v, "/")
				var i int
				fmt.Sscan(f[2], &i)
				key := f[0] + "/" + f[1]
				if prev, ok := last[key]; ok && i < prev {
					t.Errorf("seed %d: order: %s after %s/%d in %s", seed, v, key, prev, tp)
				}
				last[key] = i
				off = r.Offset + 1
			}
			if len(res.Records) == 0 || off >= res.HighWatermark {
				break
			}
		}
	}
	lost, dups := 0, 0
	for v := range acked {
		if seen[v] == 0 {
			lost++
			t.Errorf("seed %d: lost: %s was acknowledged but is not in the log", seed, v)
		}
	}
	for v, k := range seen {
		if k > 1 {
			dups++
			t.Errorf("seed %d: duplicate: %s is in the log %d times", seed, v, k)
		}
	}
	if t.Failed() {
		t.Logf("seed %d schedule:\n  %s", seed, strings.Join(script, "\n  "))
	}
	t.Logf("seed %d: %d acknowledged of %d, %d lost, %d duplicates, %d faults", seed, len(acked), 2*n, lost, dups, len(script))
}
