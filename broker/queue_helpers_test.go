package broker

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

func mustQueue(t testing.TB, c *Cluster, cfg QueueConfig) {
	t.Helper()
	if err := c.CreateQueue(ctxFor(t, 20*time.Second), cfg); err != nil {
		t.Fatalf("create queue %s: %v", cfg.Name, err)
	}
}

func mustQueueClient(t testing.TB, c *Cluster, cfg QueueClientConfig) *QueueClient {
	t.Helper()
	qc, err := c.NewQueueClient(cfg)
	if err != nil {
		t.Fatalf("new queue client: %v", err)
	}
	return qc
}

// sendBodies sends one message per body and fails the test unless every
// one is acknowledged.
func sendBodies(t testing.TB, qc *QueueClient, queue string, bodies ...string) []SendResult {
	t.Helper()
	msgs := make([]QueueMessage, len(bodies))
	for i, b := range bodies {
		msgs[i] = QueueMessage{Body: []byte(b)}
	}
	res := qc.Send(ctxFor(t, 20*time.Second), queue, msgs...)
	for i, r := range res {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("send %q to %s: %v %v", bodies[i], queue, r.Outcome, r.Err)
		}
	}
	return res
}

func receiveN(t testing.TB, qc *QueueClient, queue string, max int, wait time.Duration) []Delivery {
	t.Helper()
	ds, err := qc.Receive(ctxFor(t, wait+10*time.Second), queue, max, 0, wait)
	if err != nil {
		t.Fatalf("%s receive from %s: %v", qc.ClientID(), queue, err)
	}
	return ds
}

func queueState(s Snapshot, name string) QueueState {
	for _, q := range s.Queues {
		if q.Config.Name == name {
			return q
		}
	}
	return QueueState{}
}

func queueCounts(c *Cluster, name string) QueueCounts { return queueState(c.Snapshot(), name).Counts }

// queueEvents lists the events of one kind about one message id ("" for
// any) of one queue.
func queueEvents(c *Cluster, kind EventKind, queue, msgID string) []Event {
	var out []Event
	for _, e := range c.Events(0) {
		if e.Kind == kind && e.Group == queue && (msgID == "" || e.MsgID == msgID) {
			out = append(out, e)
		}
	}
	return out
}

// encodedQueue is one live replica's whole queue state, encoded.
func encodedQueue(t testing.TB, c *Cluster, node, name string) []byte {
	t.Helper()
	rep := c.replicaOn(node, name)
	if rep == nil || rep.queue() == nil {
		return nil
	}
	rep.queue().mu.RLock()
	defer rep.queue().mu.RUnlock()
	b, err := rep.queue().q.MarshalBinary()
	if err != nil {
		t.Fatalf("encode %s on %s: %v", name, node, err)
	}
	return b
}

// checkQueueAccounting is the closing check of every queue test. It waits
// until the queues have moved every message in transit between them and
// every live replica of each queue holds exactly the same state (the
// replicas decide deadlines, TTLs and redeliveries alike), then checks on
// each queue that every message that entered is accounted for once:
//
//	sent + moved in = acked + dead-lettered + redriven + expired
//	                  + ready + in flight + delayed (+ moving)
//
// with rejected sends counted apart (they never entered), and across the
// queues that nothing was lost or doubled between raft groups: what moved
// out of one queue arrived in another exactly once. It returns the counts.
func checkQueueAccounting(t testing.TB, c *Cluster, names ...string) map[string]QueueCounts {
	t.Helper()
	out := map[string]QueueCounts{}
	var why string
	err := poll(ctxFor(t, 20*time.Second), func() bool {
		s := c.Snapshot()
		var movedIn, movedOut uint64
		for _, name := range names {
			q := queueState(s, name)
			if q.Leader == "" {
				why = name + " has no leader"
				return false
			}
			if q.Counts.Moving != 0 {
				why = fmt.Sprintf("%s still has %d message(s) moving", name, q.Counts.Moving)
				return false
			}
			var first []byte
			for _, r := range q.Replicas {
				if !r.Up {
					continue
				}
				enc := encodedQueue(t, c, r.Node, name)
				if first == nil {
					first = enc
				} else if !bytes.Equal(first, enc) {
					why = fmt.Sprintf("replicas of %s differ (%s applied %d)", name, r.Node, r.Applied)
					return false
				}
			}
			out[name] = q.Counts
			movedIn += q.Counts.MovedIn
			movedOut += q.Counts.DeadLettered + q.Counts.Redriven
		}
		if movedIn != movedOut {
			why = fmt.Sprintf("%d message(s) moved out of the queues but %d arrived", movedOut, movedIn)
			return false
		}
		return true
	})
	if err != nil {
		t.Fatalf("queues %v never settled: %s", names, why)
	}
	for name, k := range out {
		ok, in, held := k.Balanced()
		if !ok {
			t.Errorf("%s: accounting broken: sent %d + moved in %d = %d, but acked %d + dead-lettered %d + redriven %d + expired %d + ready %d + in flight %d + delayed %d = %d",
				name, k.Sent, k.MovedIn, in, k.Acked, k.DeadLettered, k.Redriven, k.Expired, k.Ready, k.InFlight, k.Delayed, held)
		}
		ms := len(queueState(c.Snapshot(), name).Messages)
		if k.Held() < DefaultWindow && ms != k.Held() {
			t.Errorf("%s: the counts say it holds %d messages, the snapshot lists %d", name, k.Held(), ms)
		}
		t.Logf("%s: sent %d, moved in %d = acked %d + dead-lettered %d + redriven %d + expired %d + ready %d + in flight %d + delayed %d; rejected %d apart",
			name, k.Sent, k.MovedIn, k.Acked, k.DeadLettered, k.Redriven, k.Expired, k.Ready, k.InFlight, k.Delayed, k.Rejected)
	}
	return out
}
