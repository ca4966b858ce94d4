package lab

import (
	"strings"
	"testing"
	"time"
)

// Two workers on one queue, the first slower: the second finishes the
// cancel for order 881 before the first finishes the order itself. The
// queue handed them out in order; the work finished out of it.
func TestCompetingWorkersFinishOutOfOrder(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"queue create order-events",
		`send order-events key=881 value="order 881 placed"`,
		`send order-events key=881 value="order 881 cancelled"`,
		"worker start worker-a queue=order-events work=300ms",
		"wait inflight(order-events) == 1",
		"worker start worker-b queue=order-events",
		"wait processed(order-events) == 2",
		"expect workers(order-events) == 2",
	)
	rep, err := l.Check(ctxFor(t, 40*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OrderViolations != 1 || rep.Reordered != 1 || rep.Lost != 0 || rep.DuplicateDeliveries != 0 {
		t.Errorf("report %s; want order_violations=1 reordered=1", rep.Summary())
	}
}

// A consumer with retry-topic= moves a record it gives up on to the retry
// topic, same key and message id, and commits past it: its partition moves
// on. The checker finds the copy (not lost, not a duplicate write), counts
// the move, and, when the retry group finishes the payment after the
// shipment, counts the broken per-key order against the group that moved it.
func TestRetryTopicMovesAGivenUpRecord(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=2",
		"topic create orders-retry partitions=1",
		`produce orders key=881 value="order 881 placed"`,
		`produce orders key=881 value="order 881 paid"`,
		`produce orders key=881 value="order 881 shipped"`,
		`produce orders key=882 value="order 882 placed" count=3`,
		`consumer start billing-1 group=billing topic=orders retry-topic=orders-retry fail="poison:881 paid" retry=immediate max-attempts=2`,
		"wait lag(billing) == 0",
		"expect hwm(orders-retry/0) == 1",
		"consumer start retry-1 group=billing-retry topic=orders-retry",
		"wait processed(billing-retry) == 1",
	)
	if !timelineHas(l, EventClient, "it moved the record to orders-retry/0 offset 0 and commits past it") {
		t.Error("the timeline does not say where the record went")
	}
	cs := consumerNamed(t, l, "billing-1")
	if cs.GivenUp != 1 || cs.Failures != 2 || cs.Processed != 5 {
		t.Errorf("billing-1: %+v", cs)
	}
	rep, err := l.Check(ctxFor(t, 40*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Moved != 1 || rep.Lost != 0 || rep.DuplicateWrites != 0 || rep.DuplicateDeliveries != 0 || rep.OrderViolations != 1 || rep.Confirmed != 6 {
		t.Errorf("report %s; want moved=1 order_violations=1 confirmed=6 and nothing lost or doubled", rep.Summary())
	}
}

// One partition's lag, read while another partition is held up by a
// record retried in place: the held one keeps its lag, the other drains.
func TestLagOfOnePartition(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=2",
		`consumer start c1 group=billing topic=orders fail="poison:stuck" retry=backoff base=1m jitter=none max-attempts=2`,
		`consumer start c2 group=billing topic=orders fail="poison:stuck" retry=backoff base=1m jitter=none max-attempts=2`,
		`produce orders value="stuck" partition=0`,
		`produce orders value="fine" partition=0 count=2`,
		`produce orders value="fine" partition=1 count=3`,
		"wait lag(billing, orders/1) == 0",
		"wait retries(billing) == 1",
		"expect lag(billing, orders/0) == 3",
		"expect lag(billing) == 3",
		"expect lag_seconds(billing, orders/1) == 0",
		"expect workers(billing) == 1", // the one on orders/0 has finished nothing
	)
	bad := []struct{ line, want string }{
		{"expect lag(billing, orders/5) == 0", "orders has partitions 0 to 1, not 5"},
		{"expect lag(billing, nope/0) == 0", `unknown topic "nope"`},
		{"expect lag(nobody, orders/0) == 0", `unknown group "nobody"`},
	}
	mustRun(t, l, "topic create other partitions=1")
	bad = append(bad, struct{ line, want string }{"expect lag(billing, other/0) == 0", "group billing does not read other/0; it reads orders/0, orders/1"})
	for _, tc := range bad {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
}

// retry-topic= names a topic that exists and is not the one read.
func TestRetryTopicChecks(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "consumer start c1 group=billing topic=orders")
	bad := []struct{ line, want string }{
		{"consumer start c2 group=billing topic=orders retry-topic=orders-retry", `retry-topic=orders-retry: unknown topic "orders-retry"`},
		{"consumer start c2 group=billing topic=orders retry-topic=__consumer_offsets", "retry-topic=__consumer_offsets is the broker's own topic"},
		{"consumer restart c1 retry-topic=orders", "retry-topic=orders is the topic the consumer reads"},
	}
	for _, tc := range bad {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
}

// A move the retry topic does not confirm is not a skip: the consumer
// crashes rather than commit past a record nobody holds for it, and the
// record stays in its partition, uncommitted.
func TestRetryTopicThatCannotTakeTheCopy(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=1",
		"topic create orders-retry partitions=1 rf=1",
		"elect n1 orders/0",
		"elect n2 orders-retry/0",
		`consumer start c1 group=billing topic=orders retry-topic=orders-retry fail=permanent`,
		"kill n2",
		`produce orders key=881 value="order 881 paid"`,
		"wait state(c1) == crashed timeout=30s",
		"expect lag(billing) == 1",
	)
	if !timelineHas(l, EventClient, "could not move producer-1 (orders/0 offset 0) to orders-retry") {
		t.Error("the timeline does not say why c1 stopped")
	}
	mustRun(t, l, "restart n2")
	rep, err := l.Check(ctxFor(t, 40*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Moved != 0 || rep.Lost != 0 || rep.Confirmed != 1 {
		t.Errorf("report %s; want moved=0: an unconfirmed copy is no move", rep.Summary())
	}
}

// A wait may name a client that another command is about to start, as a
// lesson's task does while the learner types; an expect still fails on a
// name nobody has, and says which names there are.
func TestWaitForAClientNotStartedYet(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1")
	done := make(chan error, 1)
	go func() {
		_, err := l.Exec(ctxFor(t, 30*time.Second), "wait state(late-1) == up timeout=20s")
		done <- err
	}()
	waitFor(t, 10*time.Second, "the wait to begin", func() bool { return timelineHas(l, EventCommand, "wait state(late-1) == up") })
	mustRun(t, l, "consumer start late-1 group=billing topic=orders")
	if err := <-done; err != nil {
		t.Errorf("the wait for late-1: %v", err)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect state(nobody) == up"); err == nil || !strings.Contains(err.Error(), `no node or client named "nobody"; there are n1, n2, n3`) {
		t.Errorf("expect on a name nobody has: %v", err)
	}
}
