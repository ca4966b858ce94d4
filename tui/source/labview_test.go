package source

import (
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/internal/labtest"
	"github.com/mqlab/mqlab/tui/view"
)

// Consumer groups and queues, as the broker reports them, map onto the
// panels' types (the lab does not drive them yet; the broker has them).
func TestViewOfGroupsAndQueues(t *testing.T) {
	now := labtest.DemoStart
	snap := lab.Snapshot{Time: now, Speed: 1}
	snap.Clients = []lab.ClientState{{Name: "c2", State: "crashed"}}
	snap.Cluster.Groups = []broker.ConsumerGroupState{{
		Group: "billing", Generation: 3, State: "completing-rebalance", Lag: 7, LagSeconds: 2.5,
		Members: []broker.MemberState{
			{ID: "c1-1", ClientID: "c1", Topics: []string{"orders"}, Assignment: []broker.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}},
			{ID: "c2-1", ClientID: "c2", Topics: []string{"orders"}},
			{ID: "c3-1", ClientID: "c3", Topics: []string{"orders"}, Joining: true},
		},
		Partitions: []broker.GroupPartitionState{
			{TopicPartition: broker.TopicPartition{Topic: "orders", Partition: 0}, Committed: 5, HighWatermark: 9, Lag: 4, LagSeconds: 2.5},
			{TopicPartition: broker.TopicPartition{Topic: "orders", Partition: 1}, Committed: -1, HighWatermark: 3, Lag: 3},
		},
	}}
	q := broker.QueueState{Config: broker.QueueConfig{Name: "receipts", DLQ: "receipts-dlq", MaxReceives: 3, Visibility: 5 * time.Second}, Leader: "n2", Epoch: 4}
	q.Counts.Ready, q.Counts.InFlight, q.Counts.Delayed = 2, 1, 0
	q.Messages = []broker.QueueMessageState{
		{MsgID: "producer-1", State: "in-flight", ReceiveCount: 2, Consumer: "w1", Deadline: now.Add(3 * time.Second), Body: "receipt 881"},
		{MsgID: "producer-2", State: "ready", Body: "receipt 882"},
	}
	dlq := broker.QueueState{Config: broker.QueueConfig{Name: "receipts-dlq"}, Leader: "n3", Epoch: 2}
	dlq.Counts.Ready = 4
	snap.Cluster.Queues = []broker.QueueState{q, dlq}

	v := ViewOf(&snap)
	if len(v.Groups) != 1 {
		t.Fatalf("groups %+v", v.Groups)
	}
	g := v.Groups[0]
	if g.Name != "billing" || g.Topic != "orders" || g.Generation != 3 || g.State != "rebalancing" || g.Lag != 7 || g.LagSeconds != 2.5 {
		t.Errorf("group %+v", g)
	}
	wantMembers := []view.Member{
		{ID: "c1", Partitions: []string{"orders/0", "orders/1"}, State: "up"},
		{ID: "c2", State: "crashed"},
		{ID: "c3", State: "joining"},
	}
	if len(g.Members) != 3 {
		t.Fatalf("members %+v", g.Members)
	}
	for i, m := range wantMembers {
		got := g.Members[i]
		if got.ID != m.ID || got.State != m.State || strings.Join(got.Partitions, ",") != strings.Join(m.Partitions, ",") {
			t.Errorf("member %d = %+v, want %+v", i, got, m)
		}
	}
	if len(g.Offsets) != 2 || g.Offsets[0] != (view.GroupOffset{Partition: "orders/0", Committed: 5, HWM: 9, Lag: 4, LagSeconds: 2.5}) || g.Offsets[1].Committed != -1 {
		t.Errorf("offsets %+v", g.Offsets)
	}

	if len(v.Queues) != 2 {
		t.Fatalf("queues %+v", v.Queues)
	}
	rq := v.Queues[0]
	if rq.Name != "receipts" || rq.Leader != "n2" || rq.Epoch != 4 || rq.Ready != 2 || rq.InFlight != 1 || rq.DLQ != "receipts-dlq" || rq.DLQDepth != 4 || rq.MaxReceives != 3 || rq.Visibility != 5*time.Second {
		t.Errorf("queue %+v", rq)
	}
	if len(rq.Messages) != 2 || rq.Messages[0] != (view.QueueMessage{ID: "producer-1", Value: "receipt 881", State: "in-flight", Worker: "w1", Receives: 2, Due: 3 * time.Second}) {
		t.Errorf("messages %+v", rq.Messages)
	}
	if len(v.Tables) != 0 {
		t.Errorf("tables %+v: no service runs", v.Tables)
	}
}
