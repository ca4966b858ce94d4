package broker

import (
	"testing"
	"time"
)

// With every replica of a partition down, the snapshot still says the
// partition's epoch: the last term the replicas' disks hold, not 0. A
// restart then reads as the next epoch after it, never as "new, was 0".
func TestEpochWithEveryReplicaDown(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	var before uint64
	waitFor(t, 10*time.Second, "a leader of orders/0", func() bool {
		before = partitionOf(c.Snapshot(), tp).Epoch
		return partitionOf(c.Snapshot(), tp).Leader != ""
	})
	for _, n := range c.Nodes() {
		if err := c.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	ps := partitionOf(c.Snapshot(), tp)
	if ps.Leader != "" || ps.Epoch < before || ps.Epoch == 0 {
		t.Fatalf("with every node down, orders/0 shows leader %q at epoch %d; want no leader at epoch %d or more", ps.Leader, ps.Epoch, before)
	}
	for _, r := range ps.Replicas {
		if r.Role != "down" || r.Epoch == 0 {
			t.Errorf("down replica %s shows epoch %d (%s); want the term its disk holds", r.Node, r.Epoch, r.Role)
		}
	}
	down := ps.Epoch
	for _, n := range c.Nodes() {
		if err := c.Restart(n); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "a new leader of orders/0", func() bool {
		return partitionOf(c.Snapshot(), tp).Leader != ""
	})
	if after := partitionOf(c.Snapshot(), tp).Epoch; after <= down {
		t.Errorf("after the restart orders/0 leads at epoch %d; want more than the %d it had when down", after, down)
	}
}

func partitionOf(s Snapshot, tp TopicPartition) PartitionState {
	for _, t := range s.Topics {
		for _, p := range t.Partitions {
			if p.Topic == tp.Topic && p.Partition == tp.Partition {
				return p
			}
		}
	}
	return PartitionState{}
}
