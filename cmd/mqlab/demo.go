package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// runFailoverDemo plays the failover scene on a real 3-node cluster and
// prints what the broker reports at each step.
func runFailoverDemo(ctx context.Context, out io.Writer, timingName string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	timing, err := broker.TimingByName(timingName)
	if err != nil {
		return err
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	c, err := broker.NewCluster(broker.Config{Nodes: 3, Timing: timing})
	if err != nil {
		return err
	}
	defer c.Close()
	sub := c.Subscribe(4096)
	defer sub.Close()
	printEvents := func() {
		for {
			select {
			case e, ok := <-sub.C:
				if !ok {
					return
				}
				switch e.Kind {
				case broker.EventAppend, broker.EventCommit, broker.EventRaftLog, broker.EventProducerID:
					continue // too many to read; the tables below show their effect
				}
				say("  · %s", e.Text)
			default:
				return
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tp := broker.TopicPartition{Topic: "orders", Partition: 0}

	say("mqlab — a 3-node broker in this process, every partition its own raft group.\n")
	say("1. Create topic orders (1 partition, 3 replicas) and put its leader on n1.")
	if err := c.CreateTopic(ctx, broker.TopicConfig{Name: "orders", Partitions: 1, RF: 3}); err != nil {
		return err
	}
	if err := c.TransferLeadership(ctx, tp, "n1"); err != nil {
		return err
	}
	printEvents()
	p, err := c.NewProducer(ctx, broker.ProducerConfig{ClientID: "producer", Acks: broker.AcksAll, Idempotent: true, BatchSize: 5})
	if err != nil {
		return err
	}
	produce := func(from, to int) []broker.ProduceResult {
		var msgs []broker.Message
		for i := from; i < to; i++ {
			msgs = append(msgs, broker.Message{Topic: "orders", Key: []byte("881"), Value: []byte(fmt.Sprintf("order 881 event %d", i)), MsgID: fmt.Sprintf("producer-%d", i)})
		}
		return p.Produce(ctx, msgs...)
	}
	say("\n2. Produce 10 messages for order 881 with acks=all (a majority holds each before the answer).")
	res := produce(0, 10)
	say("   acknowledged offsets %d–%d in epoch %d", res[0].Offset, res[len(res)-1].Offset, res[0].Epoch)
	printEvents()
	printPartition(out, c.Snapshot(), tp)

	leader := c.Leader(tp)
	say("\n3. Kill the leader, %s. Its memory is gone; its disk stays.", leader)
	start := time.Now()
	if err := c.Kill(leader); err != nil {
		return err
	}
	say("\n4. Produce 5 more. The producer finds the new leader and retries there.")
	res = produce(10, 15)
	say("   acknowledged offsets %d–%d in epoch %d, %v after the kill", res[0].Offset, res[len(res)-1].Offset, res[0].Epoch, time.Since(start).Round(time.Millisecond))
	printEvents()
	printPartition(out, c.Snapshot(), tp)

	say("\n5. Restart %s. It rebuilds from its disk and catches up from the new leader.", leader)
	if err := c.Restart(leader); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for !caughtUp(c.Snapshot(), tp) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling for the display, not for correctness
	}
	printEvents()
	printPartition(out, c.Snapshot(), tp)
	say("\nEvery replica holds offsets 0–14; nothing acknowledged was lost.")
	return nil
}

func caughtUp(s broker.Snapshot, tp broker.TopicPartition) bool {
	p := find(s, tp)
	for _, r := range p.Replicas {
		if !r.Up || r.HighWatermark != 15 || r.LogEnd != 15 {
			return false
		}
	}
	return p.Leader != ""
}

func find(s broker.Snapshot, tp broker.TopicPartition) broker.PartitionState {
	for _, t := range s.Topics {
		for _, p := range t.Partitions {
			if p.Topic == tp.Topic && p.Partition == tp.Partition {
				return p
			}
		}
	}
	return broker.PartitionState{}
}

// printPartition prints one row per replica: role, epoch, log start,
// high-water mark, log end and the epochs of its last entries.
func printPartition(out io.Writer, s broker.Snapshot, tp broker.TopicPartition) {
	p := find(s, tp)
	fmt.Fprintf(out, "\n   %s  leader %s  epoch %d\n", tp, orNone(p.Leader), p.Epoch)
	fmt.Fprintf(out, "   %-4s %-9s %5s %6s %4s %4s  %s\n", "node", "role", "epoch", "start", "hwm", "leo", "entries (offset:epoch, * = uncommitted)")
	for _, r := range p.Replicas {
		if !r.Up {
			fmt.Fprintf(out, "   %-4s %-9s\n", r.Node, "down")
			continue
		}
		var cells []string
		for _, e := range r.Entries {
			mark := ""
			if !e.Committed {
				mark = "*"
			}
			cells = append(cells, fmt.Sprintf("%d:%d%s", e.Offset, e.Epoch, mark))
		}
		fmt.Fprintf(out, "   %-4s %-9s %5d %6d %4d %4d  %s\n", r.Node, r.Role, r.Epoch, r.LogStart, r.HighWatermark, r.LogEnd, strings.Join(cells, " "))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
