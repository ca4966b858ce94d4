package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker/queue"
)

// Acceptance 1: a receiver takes a message and crashes without acking;
// after the visibility timeout another receiver gets it, receive count 2.
func TestQueueVisibilityTimeoutRedelivers(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	const vis = 300 * time.Millisecond
	mustQueue(t, c, QueueConfig{Name: "receipts", Visibility: vis})
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	id := sendBodies(t, sender, "receipts", "receipt 881")[0].MsgID

	crasher := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker-1"})
	first := receiveN(t, crasher, "receipts", 1, 0)
	if len(first) != 1 || first[0].MsgID != id || first[0].ReceiveCount != 1 {
		t.Fatalf("first receive: %+v", first)
	}
	if d := first[0].Deadline.Sub(first[0].ReceivedAt); d != vis {
		t.Errorf("deadline %v after delivery, want the queue's visibility %v", d, vis)
	}
	// worker-1 crashes here: it never acks.

	other := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker-2"})
	if got := receiveN(t, other, "receipts", 1, 0); len(got) != 0 {
		t.Fatalf("a message in flight was delivered to a second receiver: %+v", got)
	}
	if q := queueState(c.Snapshot(), "receipts"); q.Counts.InFlight != 1 || q.Messages[0].Consumer != "worker-1" {
		t.Fatalf("while worker-1 holds it: %+v", q)
	}
	second := receiveN(t, other, "receipts", 1, 5*time.Second)
	if len(second) != 1 {
		t.Fatal("the message did not come back after its visibility timeout")
	}
	d := second[0]
	if d.MsgID != id || d.ReceiveCount != 2 || d.ReceiptHandle == first[0].ReceiptHandle {
		t.Fatalf("redelivery %+v; want %s with receive count 2 and a new receipt", d, id)
	}
	if d.ReceivedAt.Before(first[0].Deadline) {
		t.Errorf("redelivered at %v, before the deadline %v", d.ReceivedAt, first[0].Deadline)
	}
	err := crasher.Ack(ctxFor(t, 5*time.Second), "receipts", first[0].ReceiptHandle)
	if !errors.Is(err, ErrStaleReceipt) {
		t.Errorf("worker-1 acking after its timeout ran out: %v; want a stale receipt", err)
	}
	if err := other.Ack(ctxFor(t, 5*time.Second), "receipts", d.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if n := len(queueEvents(c, EventQueueTimeout, "receipts", id)); n != 1 {
		t.Errorf("%d timeout events, want 1", n)
	}
	if n := len(queueEvents(c, EventQueueRedeliver, "receipts", id)); n != 1 {
		t.Errorf("%d redeliver events, want 1", n)
	}
	k := checkQueueAccounting(t, c, "receipts")["receipts"]
	if k.Sent != 1 || k.Acked != 1 || k.Deliveries != 2 || k.Redeliveries != 1 || k.Timeouts != 1 {
		t.Errorf("counts %+v", k)
	}
}

// Acceptance 2: a poison message reaches the dead-letter queue after max
// receives while the messages behind it keep flowing; a permanent failure
// goes at once; redrive brings them back.
func TestQueuePoisonMessageDeadLettersAndRedrives(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "jobs", Visibility: 2 * time.Second, MaxReceives: 3, DLQ: "jobs-dlq"})
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	bodies := []string{"poison", "declined"}
	for i := 0; i < 20; i++ {
		bodies = append(bodies, fmt.Sprintf("job %d", i))
	}
	sent := sendBodies(t, sender, "jobs", bodies...)
	poisonID, declinedID := sent[0].MsgID, sent[1].MsgID

	worker := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})
	ctx := ctxFor(t, 30*time.Second)
	var poisonReceives []int
	ackedBeforeLastPoison := -1
	acked := 0
	for acked < 20 || len(poisonReceives) < 3 {
		if ctx.Err() != nil {
			t.Fatalf("worker stuck: %d acked, poison received %v", acked, poisonReceives)
		}
		ds, err := worker.Receive(ctx, "jobs", 5, 0, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			switch string(d.Body) {
			case "poison": // fails every time
				poisonReceives = append(poisonReceives, d.ReceiveCount)
				if d.ReceiveCount == 3 {
					ackedBeforeLastPoison = acked
				}
				if err := worker.Nack(ctx, "jobs", d.ReceiptHandle, 0, "cannot parse receipt"); err != nil {
					t.Fatal(err)
				}
			case "declined": // a permanent failure: no retry will help
				if err := worker.DeadLetter(ctx, "jobs", d.ReceiptHandle, "card declined"); err != nil {
					t.Fatal(err)
				}
			default:
				if err := worker.Ack(ctx, "jobs", d.ReceiptHandle); err != nil {
					t.Fatal(err)
				}
				acked++
			}
		}
	}
	if fmt.Sprint(poisonReceives) != "[1 2 3]" {
		t.Errorf("the poison was received with counts %v; want 1, 2, 3 and then never again", poisonReceives)
	}
	if ackedBeforeLastPoison < 5 {
		t.Errorf("only %d jobs were acked before the poison's last receive: the poison blocked the queue", ackedBeforeLastPoison)
	}
	// The DLQ takes them first; the source drops them one raft round later.
	waitFor(t, 10*time.Second, "both dead letters in jobs-dlq and out of jobs", func() bool {
		return queueCounts(c, "jobs-dlq").Ready == 2 && queueCounts(c, "jobs").DeadLettered == 2
	})
	dlq := queueState(c.Snapshot(), "jobs-dlq")
	byID := map[string]QueueMessageState{}
	for _, m := range dlq.Messages {
		byID[m.MsgID] = m
	}
	if m := byID[poisonID]; m.ReceiveCount != 3 || m.LastError != "cannot parse receipt" || m.Source != "jobs" || m.Body != "poison" {
		t.Errorf("poison in the DLQ: %+v; want its body, 3 receives, its last error and its source", m)
	}
	if m := byID[declinedID]; m.ReceiveCount != 1 || m.LastError != "card declined" {
		t.Errorf("declined in the DLQ: %+v; want it there after 1 receive with its reason", m)
	}
	if len(dlq.DeadLetterFor) != 1 || dlq.DeadLetterFor[0] != "jobs" {
		t.Errorf("jobs-dlq is the dead-letter queue for %v", dlq.DeadLetterFor)
	}
	if n := len(queueEvents(c, EventQueueDeadLetter, "jobs", poisonID)); n != 1 {
		t.Errorf("%d dead-letter events for the poison, want 1", n)
	}

	n, err := c.Redrive(ctxFor(t, 10*time.Second), "jobs-dlq", "")
	if err != nil || n != 2 {
		t.Fatalf("redrive: %d, %v", n, err)
	}
	back := receiveN(t, worker, "jobs", 10, 5*time.Second)
	if len(back) != 2 {
		t.Fatalf("after redrive received %d messages, want the 2 dead letters", len(back))
	}
	for _, d := range back {
		if (d.MsgID != poisonID && d.MsgID != declinedID) || d.ReceiveCount != 1 || d.Redrives != 1 {
			t.Errorf("redriven delivery %+v; want the same id, receives counted afresh", d)
		}
		if err := worker.Ack(ctx, "jobs", d.ReceiptHandle); err != nil { // fixed now
			t.Fatal(err)
		}
	}
	k := checkQueueAccounting(t, c, "jobs", "jobs-dlq")
	if j := k["jobs"]; j.Sent != 22 || j.Acked != 22 || j.DeadLettered != 2 || j.MovedIn != 2 {
		t.Errorf("jobs counts %+v", j)
	}
	if d := k["jobs-dlq"]; d.MovedIn != 2 || d.Redriven != 2 || d.Held() != 0 {
		t.Errorf("jobs-dlq counts %+v", d)
	}
}

// Acceptance 3: a full queue rejects sends at once and accepts again once
// drained.
func TestQueueFullRejectsThenAccepts(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "receipts", MaxLength: 5})
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	var msgs []QueueMessage
	for i := 0; i < 8; i++ {
		msgs = append(msgs, QueueMessage{Body: []byte(fmt.Sprintf("receipt %d", i))})
	}
	start := time.Now()
	res := sender.Send(ctxFor(t, 10*time.Second), "receipts", msgs...)
	for i, r := range res {
		if i < 5 && r.Outcome != OutcomeAcked {
			t.Fatalf("message %d: %v %v", i, r.Outcome, r.Err)
		}
		if i >= 5 {
			if r.Outcome != OutcomeFailed || !r.Rejected || !errors.Is(r.Err, ErrQueueFull) || r.Attempts != 1 {
				t.Fatalf("message %d into a full queue: %+v; want rejected at once", i, r)
			}
			if !strings.Contains(r.Err.Error(), "receipts holds 5 messages") || !strings.Contains(r.Err.Error(), "try again") {
				t.Errorf("rejection text %q should say which queue, how full, and what to do", r.Err)
			}
		}
	}
	if took := time.Since(start); took > c.Timing().RequestTimeout {
		t.Errorf("a rejection should come back at once, took %v", took)
	}
	if n := len(queueEvents(c, EventQueueReject, "receipts", "")); n != 3 {
		t.Errorf("%d reject events, want 3", n)
	}
	worker := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})
	for drained := 0; drained < 5; {
		for _, d := range receiveN(t, worker, "receipts", 10, time.Second) {
			if err := worker.Ack(ctxFor(t, 5*time.Second), "receipts", d.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
			drained++
		}
	}
	sendBodies(t, sender, "receipts", "after 1", "after 2", "after 3")
	k := checkQueueAccounting(t, c, "receipts")["receipts"]
	if k.Sent != 8 || k.Rejected != 3 || k.Acked != 5 || k.Ready != 3 {
		t.Errorf("counts %+v; want 8 sent, 3 rejected apart, 5 acked, 3 ready", k)
	}
}

// Acceptance 4: messages past their TTL expire and are never delivered.
func TestQueueTTLExpires(t *testing.T) {
	t.Parallel()
	c, clock := newClockedCluster(t)
	mustQueue(t, c, QueueConfig{Name: "offers", TTL: time.Minute})
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	stale := sendBodies(t, sender, "offers", "offer 1", "offer 2")
	clock.advance(30 * time.Second)
	late := sendBodies(t, sender, "offers", "offer 3")[0]
	clock.advance(31 * time.Second) // the first two are 61 s old, the third 31 s

	// No receive is needed: the leader's keeper ticks with its clock.
	waitFor(t, 10*time.Second, "the old offers to expire", func() bool { return queueCounts(c, "offers").Expired == 2 })
	fresh := sendBodies(t, sender, "offers", "offer 4")[0]
	worker := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})
	got := receiveN(t, worker, "offers", 10, 0)
	if len(got) != 2 || got[0].MsgID != late.MsgID || got[1].MsgID != fresh.MsgID {
		t.Fatalf("received %+v; want offers 3 and 4 only", got)
	}
	for _, r := range stale {
		if n := len(queueEvents(c, EventQueueExpire, "offers", r.MsgID)); n != 1 {
			t.Errorf("%s: %d expire events, want 1", r.MsgID, n)
		}
		if n := len(queueEvents(c, EventQueueDeliver, "offers", r.MsgID)); n != 0 {
			t.Errorf("%s expired but was delivered", r.MsgID)
		}
	}
	// Held past its ttl by a worker that never acks: when its timeout runs
	// out it expires instead of coming back.
	clock.advance(DefaultVisibility + time.Minute)
	waitFor(t, 10*time.Second, "the held offers to expire", func() bool { return queueCounts(c, "offers").Expired == 4 })
	if got := receiveN(t, worker, "offers", 10, 0); len(got) != 0 {
		t.Fatalf("expired messages came back: %+v", got)
	}
	k := checkQueueAccounting(t, c, "offers")["offers"]
	if k.Sent != 4 || k.Expired != 4 || k.Deliveries != 2 || k.Held() != 0 {
		t.Errorf("counts %+v", k)
	}
}

// Acceptance 5: kill the queue's leader under load. Nothing acknowledged
// to the sender is lost, and messages in flight keep their deadlines.
func TestQueueLeaderKillUnderLoad(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	const vis = 2500 * time.Millisecond
	mustQueue(t, c, QueueConfig{Name: "orders", Visibility: vis})
	ctx := ctxFor(t, 60*time.Second)

	// The sender: 400 messages in batches of 10, following the leader.
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	var mu sync.Mutex
	confirmed := map[string]bool{}
	var unknown, failed int
	var sentBatches sync.WaitGroup
	progress := make(chan int, 100)
	sentBatches.Add(1)
	go func() {
		defer sentBatches.Done()
		for b := 0; b < 40; b++ {
			var msgs []QueueMessage
			for i := 0; i < 10; i++ {
				msgs = append(msgs, QueueMessage{Body: []byte(fmt.Sprintf("order %d", b*10+i))})
			}
			for _, r := range sender.Send(ctx, "orders", msgs...) {
				mu.Lock()
				switch r.Outcome {
				case OutcomeAcked:
					confirmed[r.MsgID] = true
				case OutcomeUnknown:
					unknown++
				default:
					failed++
				}
				mu.Unlock()
			}
			progress <- b
		}
		close(progress)
	}()

	// Three workers receive and ack; a fourth client takes a few messages
	// and holds them without acking, to watch their deadlines.
	stop := make(chan struct{})
	processed := map[string]int{}
	var held []Delivery
	var workers sync.WaitGroup
	for w := 1; w <= 3; w++ {
		worker := mustQueueClient(t, c, QueueClientConfig{ClientID: fmt.Sprintf("worker-%d", w)})
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ds, err := worker.Receive(ctx, "orders", 5, 0, 100*time.Millisecond)
				if err != nil {
					continue // a failover: try again
				}
				for _, d := range ds {
					mu.Lock()
					for _, h := range held {
						// The same message is the same Seq: a send retried
						// after a lost reply puts a second copy in with the
						// same MsgID, free to be delivered. Within the
						// holder's window: a slow worker may see its own
						// earlier delivery only after the holder got the
						// message once that delivery expired.
						if h.Seq == d.Seq && !d.ReceivedAt.Before(h.ReceivedAt) && d.ReceivedAt.Before(h.Deadline) {
							t.Errorf("%s was delivered again at %v, before its deadline %v", d.MsgID, d.ReceivedAt, h.Deadline)
						}
					}
					mu.Unlock()
					if err := worker.Ack(ctx, "orders", d.ReceiptHandle); err == nil {
						mu.Lock()
						processed[d.MsgID]++
						mu.Unlock()
					}
				}
			}
		}()
	}
	for b := range progress {
		if b == 10 {
			break
		}
	}
	holder := mustQueueClient(t, c, QueueClientConfig{ClientID: "holder"})
	for len(held) == 0 {
		ds := receiveN(t, holder, "orders", 3, time.Second)
		mu.Lock()
		held = append(held, ds...)
		mu.Unlock()
	}
	killed := c.QueueLeader("orders")
	if err := c.Kill(killed); err != nil {
		t.Fatal(err)
	}
	lead, err := c.WaitForQueueLeader(ctxFor(t, 10*time.Second), "orders")
	if err != nil {
		t.Fatal(err)
	}
	// The new leader has the same deadlines: they are in the replicated
	// state, stamped by the old leader's clock.
	now := c.Snapshot()
	for _, h := range held {
		if !now.Time.Before(h.Deadline) {
			continue // the failover outlasted the deadline; the workers' check covers it
		}
		found := false
		for _, m := range queueState(now, "orders").Messages {
			if m.Seq != h.Seq {
				continue
			}
			found = true
			if m.State != "in-flight" || m.Consumer != "holder" || !m.Deadline.Equal(h.Deadline) {
				t.Errorf("after failover to %s, %s is %s with %s until %v; want in flight with holder until %v", lead, h.MsgID, m.State, m.Consumer, m.Deadline, h.Deadline)
			}
		}
		if !found {
			t.Errorf("%s, held in flight until %v, is missing on the new leader %s", h.MsgID, h.Deadline, lead)
		}
	}
	for range progress {
	}
	sentBatches.Wait()
	// Everything confirmed to the sender is processed: the held messages
	// after their deadlines, everything else as the workers get to it.
	waitFor(t, 30*time.Second, "the workers to process every confirmed message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for id := range confirmed {
			if processed[id] == 0 {
				return false
			}
		}
		return queueCounts(c, "orders").Held() == 0
	})
	close(stop)
	workers.Wait()
	for _, h := range held {
		if err := holder.Ack(ctxFor(t, 5*time.Second), "orders", h.ReceiptHandle); !errors.Is(err, ErrStaleReceipt) && !errors.Is(err, ErrUnknownReceipt) {
			t.Errorf("the holder's late ack of %s: %v; want a stale or unknown receipt", h.MsgID, err)
		}
	}
	if err := c.Restart(killed); err != nil {
		t.Fatal(err)
	}
	k := checkQueueAccounting(t, c, "orders")["orders"]
	mu.Lock()
	defer mu.Unlock()
	if len(confirmed) < 300 {
		t.Errorf("only %d of 400 sends confirmed (%d unknown, %d failed); the sender should ride out one failover", len(confirmed), unknown, failed)
	}
	if k.Sent < uint64(len(confirmed)) || k.Acked != k.Sent {
		t.Errorf("counts %+v; %d confirmed: every message in the queue should be acked", k, len(confirmed))
	}
	// Each ack is told once, by the first replica to apply it: also one
	// the old leader committed and died before applying, which its
	// followers applied as followers.
	events := c.Events(0)
	if len(events) == 0 || events[0].Seq != 1 {
		t.Fatalf("the event ring no longer holds the run's first events; the test needs them all")
	}
	acks := map[int64]int{}
	for _, e := range queueEvents(c, EventQueueAck, "orders", "") {
		acks[e.From]++
	}
	for seq, n := range acks {
		if n > 1 {
			t.Errorf("message m%d: %d ack events; want one", seq, n)
		}
	}
	if uint64(len(acks)) != k.Acked {
		t.Errorf("%d messages acked, %d of them told as acked: the checker would call the rest lost", k.Acked, len(acks))
	}
	t.Logf("leader %s killed; %s took over; %d confirmed, %d unknown, %d failed; %d held through the failover; %d deliveries for %d messages",
		killed, lead, len(confirmed), unknown, failed, len(held), k.Deliveries, k.Sent)
}

// Acceptance 7: bad input gets clear errors, never a panic.
func TestQueueBadInput(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	ctx := ctxFor(t, 30*time.Second)
	for _, tc := range []struct {
		cfg  QueueConfig
		want error
		text string
	}{
		{QueueConfig{Name: "jobs", DLQ: "jobs"}, ErrInvalid, "its own dead-letter queue"},
		{QueueConfig{Name: "a/b"}, ErrInvalid, "letters, digits"},
		{QueueConfig{Name: "controller"}, ErrInvalid, "taken by the controller"},
		{QueueConfig{Name: "jobs", RF: 4}, ErrInvalid, "rf=4"},
		{QueueConfig{Name: "jobs", Visibility: -time.Second}, ErrInvalid, "visibility -1s"},
		{QueueConfig{Name: "jobs", TTL: -time.Second}, ErrInvalid, "ttl -1s is negative"},
		{QueueConfig{Name: "jobs", MaxLength: -1}, ErrInvalid, "max-length -1"},
		{QueueConfig{Name: "jobs", MaxReceives: 3}, ErrInvalid, "needs dlq"},
	} {
		err := c.CreateQueue(ctx, tc.cfg)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("create %+v: %v; want %v saying %q", tc.cfg, err, tc.want, tc.text)
		}
	}
	mustQueue(t, c, QueueConfig{Name: "jobs", Visibility: 100 * time.Millisecond, MaxReceives: 3, DLQ: "jobs-dlq"})
	mustQueue(t, c, QueueConfig{Name: "plain"})
	if err := c.CreateQueue(ctx, QueueConfig{Name: "jobs"}); !errors.Is(err, ErrQueueExists) {
		t.Errorf("create twice: %v", err)
	}
	if _, err := c.NewQueueClient(QueueClientConfig{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("client without a name: %v", err)
	}
	if _, err := c.NewQueueClient(QueueClientConfig{ClientID: "w", Prefetch: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative prefetch: %v", err)
	}
	w := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})

	// Unknown queue, everywhere, naming the queues there are.
	r := w.Send(ctx, "nope", QueueMessage{Body: []byte("x")})[0]
	if r.Outcome != OutcomeFailed || !errors.Is(r.Err, ErrUnknownQueue) || !strings.Contains(r.Err.Error(), "jobs, jobs-dlq, plain") {
		t.Errorf("send to an unknown queue: %+v", r)
	}
	if _, err := w.Receive(ctx, "nope", 1, 0, 0); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("receive: %v", err)
	}
	if err := w.Ack(ctx, "nope", "m1-r1"); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("ack: %v", err)
	}
	if _, err := c.Redrive(ctx, "nope", ""); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("redrive: %v", err)
	}

	// Negative and out-of-range numbers.
	for name, err := range map[string]error{
		"receive max 0":           func() error { _, e := w.Receive(ctx, "jobs", 0, 0, 0); return e }(),
		"receive max 101":         func() error { _, e := w.Receive(ctx, "jobs", 101, 0, 0); return e }(),
		"negative visibility":     func() error { _, e := w.Receive(ctx, "jobs", 1, -time.Second, 0); return e }(),
		"negative wait":           func() error { _, e := w.Receive(ctx, "jobs", 1, 0, -time.Second); return e }(),
		"wait past the max":       func() error { _, e := w.Receive(ctx, "jobs", 1, 0, time.Minute); return e }(),
		"negative nack delay":     w.Nack(ctx, "jobs", "m1-r1", -time.Second, ""),
		"negative change":         w.ChangeVisibility(ctx, "jobs", "m1-r1", -time.Second),
		"negative send delay":     w.Send(ctx, "jobs", QueueMessage{Delay: -time.Second})[0].Err,
		"ack with no receipts":    func() error { _, e := w.AckBatch(ctx, "jobs", nil); return e }(),
		"redrive a non-DLQ":       func() error { _, e := c.Redrive(ctx, "plain", ""); return e }(),
		"redrive to itself":       func() error { _, e := c.Redrive(ctx, "jobs-dlq", "jobs-dlq"); return e }(),
		"publish with no binding": func() error { c.CreateExchange(ctx, "fanout"); _, e := w.Publish(ctx, "fanout"); return e }(),
	} {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v; want an invalid-request error", name, err)
		}
	}
	if _, err := w.Publish(ctx, "nowhere", QueueMessage{}); !errors.Is(err, ErrUnknownExchange) {
		t.Errorf("publish to an unknown exchange: %v", err)
	}
	if err := w.DeadLetter(ctx, "plain", "m1-r1", "x"); !errors.Is(err, ErrNoDLQ) {
		t.Errorf("dead-letter on a queue without a DLQ: %v", err)
	}

	// Unknown and stale receipts.
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	sendBodies(t, sender, "jobs", "one")
	for receipt, text := range map[string]string{
		"m99-r1":    "never held a message 99",
		"m1-r7":     "received only",
		"gibberish": "look like m7-r2",
	} {
		if err := w.Ack(ctx, "jobs", receipt); !errors.Is(err, ErrUnknownReceipt) || !strings.Contains(err.Error(), text) {
			t.Errorf("ack %s: %v; want an unknown receipt saying %q", receipt, err, text)
		}
	}
	first := receiveN(t, w, "jobs", 1, 0)[0]
	other := mustQueueClient(t, c, QueueClientConfig{ClientID: "other"})
	second := receiveN(t, other, "jobs", 1, 5*time.Second)
	if len(second) != 1 || second[0].ReceiveCount != 2 {
		t.Fatalf("redelivery after 100ms: %+v", second)
	}
	for name, err := range map[string]error{
		"ack":               w.Ack(ctx, "jobs", first.ReceiptHandle),
		"nack":              w.Nack(ctx, "jobs", first.ReceiptHandle, 0, ""),
		"change visibility": w.ChangeVisibility(ctx, "jobs", first.ReceiptHandle, time.Second),
		"dead-letter":       w.DeadLetter(ctx, "jobs", first.ReceiptHandle, ""),
	} {
		if !errors.Is(err, ErrStaleReceipt) || !strings.Contains(err.Error(), "receive 2") {
			t.Errorf("%s with a stale receipt: %v", name, err)
		}
	}
	if err := other.Ack(ctx, "jobs", second[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if err := other.Ack(ctx, "jobs", second[0].ReceiptHandle); err != nil {
		t.Errorf("repeating an ack that worked: %v", err)
	}
	if err := other.Nack(ctx, "jobs", second[0].ReceiptHandle, 0, ""); !errors.Is(err, ErrUnknownReceipt) || !strings.Contains(err.Error(), "no longer in queue jobs") {
		t.Errorf("nack after ack: %v", err)
	}
	checkQueueAccounting(t, c, "jobs", "jobs-dlq", "plain")
}

// A lost reply makes the sender retry and the message goes in twice with
// one id; a lost ack makes the message come back; a lost ack reply is
// retried and counted once.
func TestQueueLostRepliesAndAcks(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "payments", Visibility: 200 * time.Millisecond})
	ctx := ctxFor(t, 20*time.Second)
	sender := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	c.DropNextReply("producer")
	r := sender.Send(ctx, "payments", QueueMessage{Body: []byte("charge 450")})[0]
	if r.Outcome != OutcomeAcked || r.Attempts != 2 {
		t.Fatalf("send with a lost reply: %+v; want acknowledged on the second attempt", r)
	}
	q := queueState(c.Snapshot(), "payments")
	if q.Counts.Sent != 2 || len(q.Messages) != 2 || q.Messages[0].MsgID != r.MsgID || q.Messages[1].MsgID != r.MsgID {
		t.Fatalf("after the retry: %+v; want the message twice under one id", q.Messages)
	}

	w := mustQueueClient(t, c, QueueClientConfig{ClientID: "wallet"})
	ds := receiveN(t, w, "payments", 10, 0)
	if len(ds) != 2 {
		t.Fatalf("received %d", len(ds))
	}
	c.DropNextAck("wallet")
	err := w.Ack(ctx, "payments", ds[0].ReceiptHandle)
	if err == nil || !strings.Contains(err.Error(), "never saw it") {
		t.Fatalf("ack lost on its way: %v", err)
	}
	c.DropNextReply("wallet")
	if err := w.Ack(ctx, "payments", ds[1].ReceiptHandle); err != nil {
		t.Fatalf("ack whose reply is lost should be retried and succeed: %v", err)
	}
	again := receiveN(t, w, "payments", 10, 5*time.Second)
	if len(again) != 1 || again[0].Seq != ds[0].Seq || again[0].ReceiveCount != 2 {
		t.Fatalf("after the lost ack: %+v; want the unacked message back, receive 2", again)
	}
	w.Ack(ctx, "payments", again[0].ReceiptHandle)
	k := checkQueueAccounting(t, c, "payments")["payments"]
	if k.Sent != 2 || k.Acked != 2 || k.Redeliveries != 1 {
		t.Errorf("counts %+v", k)
	}
}

// Fan-out: an exchange copies each message to every bound queue, each
// queue deciding for itself (one full queue rejects, the other accepts).
func TestQueueFanOutExchange(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	ctx := ctxFor(t, 20*time.Second)
	mustQueue(t, c, QueueConfig{Name: "email", RF: 1})
	mustQueue(t, c, QueueConfig{Name: "billing", RF: 1, MaxLength: 2})
	if err := c.CreateExchange(ctx, "order-placed"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"email", "billing", "email"} {
		if err := c.BindQueue(ctx, "order-placed", q); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateExchange(ctx, "email"); !errors.Is(err, ErrQueueExists) {
		t.Errorf("an exchange named like a queue: %v", err)
	}
	p := mustQueueClient(t, c, QueueClientConfig{ClientID: "orders"})
	res, err := p.Publish(ctx, "order-placed",
		QueueMessage{Body: []byte("order 881")}, QueueMessage{Body: []byte("order 882")}, QueueMessage{Body: []byte("order 883")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("published to %d queues, want 2", len(res))
	}
	for i := 0; i < 3; i++ {
		e, b := res["email"][i], res["billing"][i]
		if e.MsgID != b.MsgID || e.MsgID != fmt.Sprintf("orders-%d", i+1) {
			t.Errorf("copy %d has ids %s and %s; want one id for both copies", i, e.MsgID, b.MsgID)
		}
		if e.Outcome != OutcomeAcked {
			t.Errorf("email copy %d: %v", i, e.Err)
		}
		if (i < 2) != (b.Outcome == OutcomeAcked) || (i == 2 && !b.Rejected) {
			t.Errorf("billing copy %d: %+v; want 2 accepted, the third rejected", i, b)
		}
	}
	s := c.Snapshot()
	if ex := queueState(s, "email").Exchanges; len(ex) != 1 || ex[0] != "order-placed" {
		t.Errorf("email is bound to %v", ex)
	}
	k := checkQueueAccounting(t, c, "email", "billing")
	if k["email"].Sent != 3 || k["billing"].Sent != 2 || k["billing"].Rejected != 1 {
		t.Errorf("counts %+v", k)
	}
}

// A consumer's prefetch limit caps the messages it holds in flight; a
// delayed send stays invisible until its time.
func TestQueuePrefetchAndDelay(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "tasks", RF: 1})
	ctx := ctxFor(t, 20*time.Second)
	p := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	sendBodies(t, p, "tasks", "a", "b", "c", "d")
	w := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker", Prefetch: 2})
	ds := receiveN(t, w, "tasks", 10, 0)
	if len(ds) != 2 {
		t.Fatalf("received %d with prefetch 2", len(ds))
	}
	if got := receiveN(t, w, "tasks", 10, 0); len(got) != 0 {
		t.Fatalf("received %d more while holding its limit", len(got))
	}
	// A long poll at the limit returns as soon as an ack makes room.
	var more []Delivery
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		more, _ = w.Receive(ctx, "tasks", 10, 0, 5*time.Second)
	}()
	if err := w.Ack(ctx, "tasks", ds[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(more) != 1 {
		t.Fatalf("after one ack the long poll got %d, want 1", len(more))
	}

	r := p.Send(ctx, "tasks", QueueMessage{Body: []byte("later"), Delay: 300 * time.Millisecond})[0]
	if r.Outcome != OutcomeAcked {
		t.Fatal(r.Err)
	}
	if k := queueCounts(c, "tasks"); k.Delayed != 1 {
		t.Fatalf("counts %+v; want one delayed", k)
	}
	other := mustQueueClient(t, c, QueueClientConfig{ClientID: "other"})
	var gotLater Delivery
	for gotLater.MsgID == "" {
		for _, d := range receiveN(t, other, "tasks", 10, 2*time.Second) {
			if d.MsgID == r.MsgID {
				gotLater = d
			}
			other.Ack(ctx, "tasks", d.ReceiptHandle)
		}
	}
	if d := gotLater.ReceivedAt.Sub(gotLater.EnqueuedAt); d < 300*time.Millisecond {
		t.Errorf("the delayed message was delivered %v after it was sent, before its delay", d)
	}
	checkQueueAccounting(t, c, "tasks")
}

// A replica that misses more than the trailing log catches up from a
// snapshot, in-flight messages and their deadlines included, and holds
// the same state as the others.
func TestQueueFollowerCatchesUpBySnapshot(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "events", Visibility: time.Minute})
	lead := c.QueueLeader("events")
	var follower string
	for _, n := range c.Nodes() {
		if n != lead {
			follower = n
			break
		}
	}
	if err := c.Kill(follower); err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, 60*time.Second)
	sendMany := func(each int) {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			p := mustQueueClient(t, c, QueueClientConfig{ClientID: fmt.Sprintf("p%d", g)})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ { // one raft entry per send
					if r := p.Send(ctx, "events", QueueMessage{Body: []byte("e")})[0]; r.Outcome != OutcomeAcked {
						t.Errorf("send: %v", r.Err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	sendMany(20)
	w := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})
	ds := receiveN(t, w, "events", 100, 0)
	for _, d := range ds[:50] {
		w.Ack(ctx, "events", d.ReceiptHandle)
	}
	sendMany(140) // past the snapshot threshold, with 50 messages in flight
	waitFor(t, 20*time.Second, "the leader to snapshot and compact its log", func() bool {
		rep := c.replicaOn(lead, "events")
		return rep != nil && rep.disk.Snaps.Index() > 0
	})
	if err := c.Restart(follower); err != nil {
		t.Fatal(err)
	}
	k := checkQueueAccounting(t, c, "events")["events"]
	if k.Sent != 1280 || k.Acked != 50 || k.InFlight != 50 {
		t.Errorf("counts %+v", k)
	}
	all, err := c.QueueMessages(ctx, "events")
	if err != nil || len(all) != 1230 || all[0].State != "in-flight" || all[len(all)-1].State != "ready" {
		t.Errorf("QueueMessages: %d messages, %v", len(all), err)
	}
	if rep := c.replicaOn(follower, "events"); rep == nil || rep.disk.Snaps.Index() == 0 {
		t.Errorf("%s came back without a snapshot; the test meant to exercise restore", follower)
	}
}

// The move to the dead-letter queue crosses two raft groups. Kill the
// source's leader after the DLQ holds the message and before the source
// has dropped it: the next leader hands it over again, the DLQ recognises
// the repeat, and the message ends up in the DLQ once.
func TestQueueDeadLetterSurvivesFailoverMidMove(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustQueue(t, c, QueueConfig{Name: "jobs", MaxReceives: 5, DLQ: "jobs-dlq"})
	var mu sync.Mutex
	var arrivals []queue.Result
	killed := ""
	hook := func(hc *Cluster, source string, out queue.Outgoing, arrived queue.Result) {
		if hc != c {
			return // another test's cluster, running beside this one
		}
		mu.Lock()
		defer mu.Unlock()
		arrivals = append(arrivals, arrived)
		if len(arrivals) == 1 {
			killed = c.QueueLeader(source)
			if err := c.Kill(killed); err != nil {
				t.Errorf("kill the leader of %s mid-move: %v", source, err)
			}
		}
	}
	moveHook.Store(&hook)
	t.Cleanup(func() { moveHook.Store(nil) })
	if c.QueueLeader("jobs") == c.QueueLeader("jobs-dlq") {
		t.Fatalf("both queues lead on %s; the test wants the DLQ to survive the kill", c.QueueLeader("jobs"))
	}

	p := mustQueueClient(t, c, QueueClientConfig{ClientID: "producer"})
	id := sendBodies(t, p, "jobs", "card 4111 declined")[0].MsgID
	w := mustQueueClient(t, c, QueueClientConfig{ClientID: "worker"})
	d := receiveN(t, w, "jobs", 1, time.Second)[0]
	if err := w.DeadLetter(ctxFor(t, 5*time.Second), "jobs", d.ReceiptHandle, "card declined"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the move to finish under a new leader", func() bool {
		k := queueCounts(c, "jobs")
		return k.DeadLettered == 1 && k.Moving == 0
	})
	mu.Lock()
	if len(arrivals) != 2 || arrivals[0].Duplicate || !arrivals[1].Duplicate || arrivals[1].Seq != arrivals[0].Seq {
		t.Errorf("arrivals at the DLQ %+v; want the first new, the repeat recognised as the same message", arrivals)
	}
	victim := killed
	mu.Unlock()
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	k := checkQueueAccounting(t, c, "jobs", "jobs-dlq")
	if k["jobs-dlq"].MovedIn != 1 || k["jobs-dlq"].Ready != 1 {
		t.Errorf("jobs-dlq counts %+v; want the message there exactly once", k["jobs-dlq"])
	}
	if m := queueState(c.Snapshot(), "jobs-dlq").Messages; len(m) != 1 || m[0].MsgID != id || m[0].LastError != "card declined" {
		t.Errorf("jobs-dlq holds %+v", m)
	}
}
