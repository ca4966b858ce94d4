package broker

import (
	"errors"
	"testing"
	"time"
)

// A deleted queue drops what it held (each message counted as dropped),
// stops on every node and disappears; its name then takes a new, empty
// queue. A queue that is another's dead-letter queue is refused.
func TestDeleteQueue(t *testing.T) {
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "receipts", Visibility: time.Minute, MaxReceives: 3, DLQ: "receipts-dlq"})
	qc := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	sent := sendBodies(t, qc, "receipts", "receipt 881", "receipt 882", "receipt 883")
	if got := receiveN(t, qc, "receipts", 1, 0); len(got) != 1 {
		t.Fatalf("receive: %+v", got)
	}

	if _, err := c.DeleteQueue(ctxFor(t, 20*time.Second), "receipts-dlq", "admin"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("deleting receipts' dead-letter queue: %v; want it refused while receipts exists", err)
	}
	if err := c.CreateExchange(ctxFor(t, 20*time.Second), "sales"); err != nil {
		t.Fatal(err)
	}
	if err := c.BindQueue(ctxFor(t, 20*time.Second), "sales", "receipts"); err != nil {
		t.Fatal(err)
	}
	// A replica that is down when the queue goes loses it too: it does
	// not come back with it on restart.
	down := ""
	for _, n := range c.Nodes() {
		if n != c.QueueLeader("receipts") && down == "" {
			down = n
		}
	}
	if err := c.Kill(down); err != nil {
		t.Fatal(err)
	}
	n, err := c.DeleteQueue(ctxFor(t, 20*time.Second), "receipts", "admin")
	if err != nil || n != 3 {
		t.Fatalf("delete receipts: %d dropped, %v; want the 3 it held (one in flight)", n, err)
	}
	for _, s := range sent {
		if len(queueEvents(c, EventQueueDrop, "receipts", s.MsgID)) != 1 {
			t.Errorf("%s was not reported dropped once", s.MsgID)
		}
	}
	if len(queueEvents(c, EventQueueDeleted, "receipts", "")) != 1 {
		t.Error("no event says receipts was deleted")
	}
	if q := queueState(c.Snapshot(), "receipts"); q.Config.Name != "" {
		t.Fatalf("the snapshot still shows receipts: %+v", q)
	}
	for _, n := range c.Nodes() {
		if c.replicaOn(n, "receipts") != nil {
			t.Errorf("%s still runs a replica of receipts", n)
		}
	}
	if bound, err := c.boundQueues("sales"); err != nil || len(bound) != 0 {
		t.Errorf("exchange sales is still bound to %v (%v); want nothing", bound, err)
	}
	if err := c.Restart(down); err != nil {
		t.Fatal(err)
	}
	if c.replicaOn(down, "receipts") != nil {
		t.Errorf("%s, down during the delete, came back with a replica of receipts", down)
	}
	if r := qc.Send(ctxFor(t, 5*time.Second), "receipts", QueueMessage{Body: []byte("late")}); !errors.Is(r[0].Err, ErrUnknownQueue) {
		t.Fatalf("a send to the deleted queue: %v; want ErrUnknownQueue", r[0].Err)
	}
	if _, err := c.DeleteQueue(ctxFor(t, 5*time.Second), "receipts", "admin"); !errors.Is(err, ErrUnknownQueue) {
		t.Fatalf("deleting it again: %v; want ErrUnknownQueue", err)
	}
	// The dead-letter queue may go now that nothing sends it failures.
	if _, err := c.DeleteQueue(ctxFor(t, 20*time.Second), "receipts-dlq", "admin"); err != nil {
		t.Fatalf("delete receipts-dlq after receipts: %v", err)
	}

	// The name takes a new queue, which starts empty and works; the
	// controller's copy agrees, so a node that restarts rebuilds it.
	mustQueue(t, c, QueueConfig{Name: "receipts"})
	if q := queueState(c.Snapshot(), "receipts"); q.Counts.Depth() != 0 {
		t.Fatalf("the new receipts holds %+v", q.Counts)
	}
	id := sendBodies(t, qc, "receipts", "receipt 884")[0].MsgID
	lead := c.QueueLeader("receipts")
	if err := c.Kill(lead); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(lead); err != nil {
		t.Fatal(err)
	}
	got := receiveN(t, qc, "receipts", 1, 10*time.Second)
	if len(got) != 1 || got[0].MsgID != id {
		t.Fatalf("the new receipts across its leader's restart gave %+v; want %s", got, id)
	}
}
