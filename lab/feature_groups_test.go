package lab

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// consumerNamed returns one consumer client from a snapshot.
func consumerNamed(t testing.TB, l *Lab, name string) ConsumerState {
	t.Helper()
	for _, cs := range l.Snapshot().Consumers {
		if cs.Name == name {
			return cs
		}
	}
	t.Fatalf("no consumer %s in the snapshot", name)
	return ConsumerState{}
}

// timelineHas reports whether a timeline event of kind contains text.
func timelineHas(l *Lab, kind EventKind, text string) bool {
	for _, e := range l.Snapshot().Timeline {
		if e.Kind == kind && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// Commands that cannot run say why and leave the lab as it was: no
// consumer, no group, nothing in the timeline.
func TestConsumerCommandsCheckBeforeActing(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=881 count=2")
	bad := []struct{ line, want string }{
		{"consumer start c2 group=billing topic=nope", `unknown topic "nope"; the topics are`},
		{"consumer start c2 group=billing topic=__consumer_offsets", "the broker's own topic"},
		{"consumer start c2 group=billing topic=orders service=wallet", "no wallet service is running; start it with service start wallet"},
		{"consumer start producer group=billing topic=orders", "producer is already a producer client"},
		{"consumer start wallet group=billing topic=orders", "wallet is already a service's name"},
		{"consumer start c2 group=billing topic=orders retry=none max-attempts=3", "without retries there is one attempt"},
		{"consumer restart c1", "no consumer named c1; start one with consumer start c1 group=GROUP topic=TOPIC"},
		{"consumer stop c1", "no consumer named c1"},
		{"seek billing orders/0 to=earliest", `unknown group "billing": there are no groups yet`},
	}
	check := func() {
		t.Helper()
		before := len(l.Snapshot().Timeline)
		for _, tc := range bad {
			if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
			}
		}
		if after := len(l.Snapshot().Timeline); after != before {
			t.Errorf("the timeline grew from %d to %d events; failed commands should leave no trace", before, after)
		}
	}
	check()
	if cs := l.Snapshot().Consumers; len(cs) != 0 {
		t.Fatalf("consumers after failed commands: %+v", cs)
	}

	mustRun(t, l, "consumer start c1 group=billing topic=orders", "wait lag(billing) == 0")
	bad = append(bad[:6],
		struct{ line, want string }{"consumer start c1 group=billing topic=orders", "c1 is already up (group billing, topic orders); consumer restart c1 starts it again"},
		struct{ line, want string }{"consumer stop c2", `no consumer named c2; did you mean "c1"?`},
		struct{ line, want string }{"seek billing orders/3 to=0", "orders has only partition 0, not 3"},
		struct{ line, want string }{"seek billing orders/0 to=9", "offset 9 is beyond the end of orders/0, whose next record will be 2"},
		struct{ line, want string }{"seek biling orders/0 to=0", `unknown group "biling"; the groups are billing; did you mean "billing"?`},
		struct{ line, want string }{"produce orders as=_c", "client names cannot start with '_'"},
	)
	check()
	cs := consumerNamed(t, l, "c1")
	if cs.State != ClientUp || cs.Delivered != 2 || cs.Processed != 2 {
		t.Errorf("c1 after the failed commands: %+v", cs)
	}
	mustRun(t, l, "consumer stop c1")
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "consumer stop c1"); err == nil || !strings.Contains(err.Error(), "c1 is stopped already") {
		t.Errorf("a second stop: %v", err)
	}
	var ee *ExpectationError
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect lag(shipping) == 0"); !errors.As(err, &ee) || !strings.Contains(err.Error(), `unknown group "shipping"; the groups are billing`) {
		t.Errorf("lag of an unknown group: %v", err)
	}
}

// A consumer's state, counts and assignment are in the snapshot; state()
// reads up, crashed and stopped; the group itself is the broker's.
func TestConsumerStateInTheSnapshot(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "produce orders key=order-{n} count=6",
		"consumer start c1 group=billing topic=orders", "wait lag(billing) == 0", "expect state(c1) == up")
	cs := consumerNamed(t, l, "c1")
	if cs.Group != "billing" || cs.Topic != "orders" || cs.State != ClientUp || cs.Generation < 1 || cs.Member == "" ||
		strings.Join(cs.Assignment, ",") != "orders/0,orders/1" || cs.Delivered != 6 || cs.Processed != 6 || cs.Commits != 6 {
		t.Errorf("c1: %+v", cs)
	}
	var found bool
	for _, g := range l.Snapshot().Cluster.Groups {
		if g.Group == "billing" {
			found = true
			if len(g.Members) != 1 || g.Members[0].ClientID != "c1" || g.Lag != 0 {
				t.Errorf("group billing: %+v", g)
			}
		}
	}
	if !found {
		t.Error("no group billing in the cluster snapshot")
	}
	// A consumer is a client: a fault can be armed for it.
	mustRun(t, l, "drop next ack from c1", "produce orders key=order-1", "wait delivered(billing) == 7")
	waitFor(t, 10*time.Second, "the lost commit to be reported", func() bool { return consumerNamed(t, l, "c1").CommitErrors == 1 })
	if !timelineHas(l, EventClient, "c1's commit of orders/") || !timelineHas(l, EventClient, "the request was lost on the way") {
		t.Error("the lost commit is not in the timeline")
	}
	mustRun(t, l, "expect lag(billing) == 1", "produce orders key=order-1", "wait lag(billing) == 0",
		"consumer restart c1 crash=before-work", "produce orders key=order-2", "wait state(c1) == crashed")
	if cs := consumerNamed(t, l, "c1"); cs.State != ClientCrashed || cs.Crash != "" || len(cs.Assignment) != 0 {
		t.Errorf("crashed c1: %+v", cs)
	}
	if !timelineHas(l, EventClient, "c1 crashed at before-work of producer-") {
		t.Error("the crash is not in the timeline")
	}
	mustRun(t, l, "consumer stop c1", "expect state(c1) == stopped")
	if cs := consumerNamed(t, l, "c1"); cs.State != ClientStopped {
		t.Errorf("stopped c1: %+v", cs)
	}
}

// A failure follows the retry policy; a record the client gives up on is
// skipped, its offset committed, while the others flow.
func TestConsumerRetriesAndGivesUp(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1",
		`produce orders key=1 value="order 1"`, `produce orders key=2 value="order 2 BAD"`, `produce orders key=3 value="order 3"`,
		"consumer start poisoned group=a topic=orders fail=poison:BAD retry=immediate max-attempts=3",
		"consumer start hopeless group=b topic=orders fail=permanent retry=backoff base=1s",
		"consumer start flaky group=c topic=orders fail=transient:0.5 retry=backoff base=5ms cap=20ms jitter=equal max-attempts=30",
		"wait lag(a) == 0", "wait lag(b) == 0", "wait lag(c) == 0",
		"expect delivered(a) == 3", "expect processed(a) == 2",
		"expect processed(b) == 0", "expect processed(c) == 3")
	if cs := consumerNamed(t, l, "poisoned"); cs.Failures != 3 || cs.GivenUp != 1 {
		t.Errorf("poisoned: %d failures, %d given up; want 3 attempts on the poison message, then skipped", cs.Failures, cs.GivenUp)
	}
	if cs := consumerNamed(t, l, "hopeless"); cs.Failures != 3 || cs.GivenUp != 3 {
		t.Errorf("hopeless: %d failures, %d given up; a permanent failure is not retried", cs.Failures, cs.GivenUp)
	}
	if cs := consumerNamed(t, l, "flaky"); cs.Failures == 0 || cs.GivenUp != 0 {
		t.Errorf("flaky: %d failures, %d given up; want some failures, all retried to success", cs.Failures, cs.GivenUp)
	}
	if !timelineHas(l, EventClient, `poisoned gave up on producer-2 (orders/0 offset 1) after 3 attempt(s): poison message: its payload contains "BAD"`) {
		t.Error("the poison message's fate is not in the timeline")
	}
	if !timelineHas(l, EventClient, "hopeless gave up on producer-1 (orders/0 offset 0) at once: the failure is permanent") {
		t.Error("the permanent failure is not in the timeline")
	}
}

// A consumer whose service is not running waits with the record
// uncommitted, and carries on once the service runs again.
func TestConsumerWaitsForItsService(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create cashbacks partitions=1", "service start wallet",
		"consumer start c1 group=cashback topic=cashbacks service=wallet", "service stop wallet",
		"produce cashbacks key=881 count=2")
	waitFor(t, 10*time.Second, "c1 to wait for the wallet", func() bool { return consumerNamed(t, l, "c1").Waiting == "wallet" })
	if !timelineHas(l, EventClient, "c1 waits for wallet, which is not running") {
		t.Error("the wait is not in the timeline")
	}
	mustRun(t, l, "expect lag(cashback) == 2", "expect processed(cashback) == 0", "service start wallet",
		"wait lag(cashback) == 0", "expect rows(wallet.wallets, balance=100) == 1", "expect processed(cashback) == 2")
	if cs := consumerNamed(t, l, "c1"); cs.Waiting != "" || cs.Failures != 0 {
		t.Errorf("c1 after the wallet came back: %+v", cs)
	}
}

// A seek's replays are not duplicates, but a redelivery of a replayed
// message after a crash is.
func TestSeekReplaysAndCrashDuplicates(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=881 count=3",
		"consumer start c1 group=billing topic=orders", "wait lag(billing) == 0",
		"consumer restart c1 crash=after-work", "seek billing orders/0 to=-1h",
		"wait state(c1) == crashed", "expect duplicate_deliveries == 0",
		"consumer restart c1", "wait lag(billing) == 0",
		"expect delivered(billing) == 7", "expect processed(billing) == 3",
		"expect duplicate_deliveries == 1")
	var replays int
	for _, d := range l.Deliveries() {
		if d.Replay {
			replays++
		}
	}
	if replays != 3 {
		t.Errorf("%d deliveries marked as replays; want 3 (offsets 0, 1, 2 once each after the seek)", replays)
	}
	// check why names the record behind the count, and the group.
	res := mustRun(t, l, "check why duplicate_deliveries")
	if said := strings.Join(res[0].Lines, "\n"); !strings.Contains(said, "duplicate_deliveries 1, because:") ||
		!strings.Contains(said, "on orders (group billing, client c1): delivered to the group a 2nd time") {
		t.Errorf("check why said:\n%s", said)
	}
	res = mustRun(t, l, "check why order_violations")
	if said := strings.Join(res[0].Lines, "\n"); !strings.Contains(said, "order_violations is 0: no record is behind it") {
		t.Errorf("check why order_violations said:\n%s", said)
	}
	// An expect the count fails names the first record behind it.
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect duplicate_deliveries == 0"); err == nil ||
		!strings.Contains(err.Error(), "the first: ") || !strings.Contains(err.Error(), "delivered to the group a 2nd time") {
		t.Errorf("a failed expect on duplicate_deliveries said %v; want it to name the record behind the count", err)
	}
	// A seek forward skips records and replays nothing.
	mustRun(t, l, "consumer stop c1", "produce orders key=881 count=3", "seek billing orders/0 to=5",
		"consumer start c1 group=billing topic=orders", "wait lag(billing) == 0",
		"expect delivered(billing) == 8", "expect duplicate_deliveries == 1")
}

// rate= paces the work in lab time, so speed applies.
func TestConsumerRateFollowsLabTime(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=1 count=21 batch=21", "speed 10x")
	start := time.Now()
	mustRun(t, l, "consumer start c1 group=billing topic=orders rate=20/s", "wait lag(billing) == 0")
	wall := time.Since(start)
	ds := l.Deliveries()
	if len(ds) != 21 {
		t.Fatalf("%d deliveries", len(ds))
	}
	spread := ds[20].Time.Sub(ds[0].Time)
	if spread < 900*time.Millisecond || spread > 3*time.Second {
		t.Errorf("21 records at 20/s took %v of lab time; want about 1s", spread)
	}
	if wall > 5*time.Second {
		t.Errorf("at 10x, 1s of lab time took %v of wall time", wall)
	}
	t.Logf("21 records at 20/s: %v of lab time, %v of wall time at 10x", spread.Round(time.Millisecond), wall.Round(time.Millisecond))
}

// lag_seconds is the age of the oldest unconsumed message, in lab time.
func TestLagSeconds(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders key=1", "consumer start c1 group=billing topic=orders",
		"wait lag(billing) == 0", "consumer stop c1", "produce orders key=1", "speed 100x", "wait lag_seconds(billing) >= 2", "expect lag(billing) == 1",
		"consumer start c1 group=billing topic=orders", "wait lag(billing) == 0", "expect lag_seconds(billing) == 0")
}

// A new cluster retires the old one's consumers; nothing leaks (TestMain
// checks goroutines).
func TestClusterCommandRetiresConsumers(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "load orders rate=200/s for=2s key=k-{n}",
		"consumer start c1 group=billing topic=orders", "consumer start c2 group=billing topic=orders rate=50/s",
		"wait delivered(billing) >= 20", "cluster nodes=1")
	if cs := l.Snapshot().Consumers; len(cs) != 0 {
		t.Errorf("consumers after cluster: %+v", cs)
	}
	if _, err := l.Exec(ctxFor(t, 5*time.Second), "expect state(c1) == up"); err == nil || !strings.Contains(err.Error(), `no node or client named "c1"`) {
		t.Errorf("state(c1) in the new cluster: %v", err)
	}
}

// help explains consumer and seek as commands that run, service= included.
func TestHelpConsumer(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	res := mustRun(t, l, "help consumer", "help seek")
	got := strings.Join(append(res[0].Lines, res[1].Lines...), "\n")
	if strings.Contains(got, "not available") || !strings.Contains(got, "service=payments|wallet") || !strings.Contains(got, "to=OFFSET|earliest|latest|TIME") {
		t.Errorf("help consumer, help seek:\n%s", got)
	}
}

// A group's lag is offsets, as Kafka reports it (the end offset minus the
// committed one): on a compacted topic it counts the offsets a pass
// emptied, so it is more than the records left to read.
func TestLagCountsOffsetsCompactionEmptied(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create status partitions=1 segment=4 cleanup=compact cleaner=manual",
		"produce status key=k{n} value=a count=3", "produce status key=k{n} value=b count=3", "produce status key=k{n} value=c count=3",
		"compact status/0", "expect records(status/0) == 4", // k3's b, then c for all three
		"consumer start audit-1 group=audit topic=status crash=before-work", "wait state(audit-1) == crashed",
		"expect lag(audit) == 9", "expect lag(audit, status/0) == 9")
}

// A crashed member's session runs out in lab time as well as wall time:
// while the lab's clock stands still the coordinator keeps it, however
// long that lasts, and once the clock runs again it drops it.
func TestSessionsWaitForAPausedClock(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2",
		"consumer start c1 group=billing topic=orders",
		"consumer start c2 group=billing topic=orders session=1s crash=after-work",
		"wait members(billing) == 2",
		"produce orders count=2 partition=0", "produce orders count=2 partition=1",
		"wait state(c2) == crashed", "pause")
	// Twice c2's session in wall time, with lab time stopped.
	paused := time.Now()
	for time.Since(paused) < 2*time.Second {
		if got := labNumberOf(t, l, "members(billing)"); got != 2 {
			t.Fatalf("%v into a pause the group has %v members; want c2 kept while lab time stands still",
				time.Since(paused).Round(time.Millisecond), got)
		}
		time.Sleep(100 * time.Millisecond) // read the group again: what is tested is that nothing changes
	}
	mustRun(t, l, "resume", "wait members(billing) == 1")
}
