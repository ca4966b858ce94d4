package lab

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// readValue reads one lab value as a placeholder would.
func readValue(t testing.TB, l *Lab, expr string) (string, error) {
	t.Helper()
	c, err := command.Parse("expect " + expr + " == " + expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return l.Value(ctxFor(t, 10*time.Second), c.(command.Expect).Cond.Left)
}

func labNumberOf(t testing.TB, l *Lab, expr string) float64 {
	t.Helper()
	s, err := readValue(t, l, expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", expr, s, err)
	}
	return f
}

// throughput(Q) is what a queue's workers finish per second: one worker
// at 40/s reads about 40, two about 80. It cannot be read until the
// workers have run unchanged for a whole window, and a queue nobody works
// on reads 0.
func TestThroughputOfQueueWorkers(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create jobs", "load jobs rate=2000/s for=1s as=backlog", "worker start w1 queue=jobs rate=40/s")
	if _, err := readValue(t, l, "throughput(jobs)"); err == nil || !strings.Contains(err.Error(), "measuring: w1 changed") {
		t.Errorf("throughput right after a start: %v; want it not readable yet, naming w1", err)
	}
	mustRun(t, l, "wait throughput(jobs) > 0")
	if got := labNumberOf(t, l, "throughput(jobs)"); got < 25 || got > 42 {
		t.Errorf("one worker at 40/s: throughput %v", got)
	}
	mustRun(t, l, "worker start w2 queue=jobs rate=40/s", "wait throughput(jobs) > 0")
	if got := labNumberOf(t, l, "throughput(jobs)"); got < 55 || got > 82 {
		t.Errorf("two workers at 40/s: throughput %v", got)
	}
	mustRun(t, l, "worker stop w1", "worker stop w2", "wait throughput(jobs) == 0")

	mustRun(t, l, "queue create idle")
	if got := labNumberOf(t, l, "throughput(idle)"); got != 0 {
		t.Errorf("a queue without workers: throughput %v", got)
	}
	if _, err := readValue(t, l, "throughput(nope)"); err == nil || !strings.Contains(err.Error(), `unknown queue "nope", and no consumer group of that name yet`) {
		t.Errorf("throughput of an unknown name: %v", err)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect throughput(nope) >= 0"); err == nil {
		t.Errorf("an expect on an unknown name held")
	}
}

// A group with more members than partitions has idle members: members(G)
// counts them all, idle(G) the ones without a partition, and the group's
// throughput stays at what its partitions' owners do.
func TestGroupMembersIdleAndThroughput(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2",
		"load orders rate=2000/s for=1s key=order-{n}",
		"consumer start c1 group=billing topic=orders rate=30/s",
		"consumer start c2 group=billing topic=orders rate=30/s",
		"consumer start c3 group=billing topic=orders rate=30/s",
		"wait members(billing) == 3",
		"wait idle(billing) == 1",
		"expect owned(billing) == 2",
		"wait throughput(billing) > 0")
	if got := labNumberOf(t, l, "throughput(billing)"); got < 35 || got > 62 {
		t.Errorf("three consumers at 30/s on two partitions: throughput %v, want at most about 60", got)
	}
	idle := 0
	for _, cs := range l.Snapshot().Consumers {
		if len(cs.Assignment) == 0 {
			idle++
		}
	}
	if idle != 1 {
		t.Errorf("the snapshot shows %d consumers without a partition, want 1: %+v", idle, l.Snapshot().Consumers)
	}
	// c3's leave starts a rebalance, and members(G) leaves out a member
	// that has rejoined and waits for it to finish: wait for both.
	mustRun(t, l, "consumer stop c3", "wait idle(billing) == 0", "wait members(billing) == 2", "expect owned(billing) == 2")
	// With its last member gone no partition has an owner.
	mustRun(t, l, "consumer stop c1", "consumer stop c2", "wait members(billing) == 0", "expect owned(billing) == 0")

	for _, expr := range []string{"idle(nobody)", "members(nobody)", "owned(nobody)"} {
		if _, err := readValue(t, l, expr); err == nil || !strings.Contains(err.Error(), "nobody") {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// Bad values are refused when the line is parsed, saying what is wrong.
func TestBackPressureValuesParse(t *testing.T) {
	bad := []struct{ line, want string }{
		{"expect throughput() > 0", "throughput(…) needs GROUP|QUEUE"},
		{"expect idle(orders/0) == 1", "idle(…) needs GROUP"},
		{"expect members(billing) == up", "is a word and"},
		{"expect throughpt(jobs) > 1", `did you mean "throughput"`},
	}
	for _, tc := range bad {
		_, err := command.Parse(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
}

// A load onto a queue sends in the background; a full queue refuses what
// does not fit, and the load counts the refusals. Its messages' events are
// Detail: too many to list.
func TestLoadOntoQueue(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	sub := l.Subscribe(1 << 16)
	defer sub.Close()
	mustRun(t, l, "queue create orders max-length=20",
		"load orders rate=200/s for=0.5s as=checkout",
		"wait state(checkout) == stopped",
		"expect depth(orders) == 20",
		"expect rejected == 80",
		"expect confirmed == 20",
		"expect lost == 0")
	var ld LoadState
	for _, s := range l.Snapshot().Loads {
		if s.Client == "checkout" {
			ld = s
		}
	}
	if ld.Topic != "orders" || ld.Total != 100 || ld.Sent != 100 || ld.Acknowledged != 20 || ld.Rejected != 80 || ld.State != LoadStopped {
		t.Errorf("the load: %+v", ld)
	}
	shown := 0
	for {
		select {
		case e := <-sub.C:
			if e.Broker != nil && strings.Contains(e.Text, "checkout-") && !e.Detail {
				shown++
			}
			continue
		default:
		}
		break
	}
	if shown != 0 {
		t.Errorf("%d per-message events of the load are not Detail", shown)
	}
	stopped := false
	for _, e := range l.Snapshot().Timeline {
		if strings.Contains(e.Text, "load orders as checkout stopped: 100 of 100 sent; 20 acknowledged, 80 rejected") {
			stopped = true
		}
	}
	if !stopped {
		t.Errorf("the timeline does not sum the load up")
	}
}

// Options that only a topic takes are refused for a queue, and nothing
// starts.
func TestLoadOntoQueueRefusesTopicOptions(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create orders")
	bad := []struct{ line, want string }{
		{"load orders rate=10/s for=1s key=order-{n}", "orders is a queue, and key= only for a topic"},
		{"load orders rate=10/s for=1s acks=1 batch=5", "acks= batch= only for a topic"},
		{"load orders rate=10/s for=1s as=_x", "client names cannot start with '_'"},
		{"load orders rate=1/s for=0.1s", "makes no messages"},
		{"load ordres rate=10/s for=1s", `unknown topic "ordres" and no queue of that name; the topics and queues are orders; did you mean "orders"?`},
	}
	for _, tc := range bad {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
	if n := len(l.Snapshot().Loads); n != 0 {
		t.Errorf("%d loads started", n)
	}
}

// Numbers are shown to two decimals at most.
func TestShowRounds(t *testing.T) {
	for in, want := range map[float64]string{2.000299326: "2", 0.4949: "0.49", 199: "199", 0.125: "0.13", -3.5: "-3.5"} {
		if got := show(in); got != want {
			t.Errorf("show(%v) = %q, want %q", in, got, want)
		}
	}
}

// The work a service does for a load's messages is Detail in the
// timeline, statement by statement; the same work for a message sent by
// hand is shown.
func TestLoadMessagesServiceWorkIsDetail(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create jobs", "service start wallet strategy=dedupe-table")
	sub := l.Subscribe(1 << 16)
	defer sub.Close()
	mustRun(t, l, "load jobs rate=100/s for=0.2s as=sale", "wait state(sale) == stopped",
		"send jobs as=shop", "worker start k1 queue=jobs service=wallet", "wait processed(jobs) == 21")
	counts := map[string]int{}
	for {
		var e Event
		select {
		case e = <-sub.C:
		default:
		}
		if e.Seq == 0 {
			break
		}
		if e.Kind != EventSQL || e.Service == nil {
			continue
		}
		switch {
		case strings.Contains(e.Text, "'sale-") && e.Detail:
			counts["load, detail"]++
		case strings.Contains(e.Text, "'sale-"):
			counts["load, shown"]++
		case e.Text == "wallet COMMIT" && !e.Detail:
			counts["commits shown"]++
		}
	}
	if counts["load, shown"] != 0 || counts["load, detail"] == 0 || counts["commits shown"] != 1 {
		t.Errorf("SQL events: %v; want the load's all detail and one COMMIT shown, for shop-1", counts)
	}
}

// A worker that empties its queue after every message still keeps to its
// rate: two at 50 a second fall behind 150 arrivals a second.
func TestWorkersKeepTheirRateWhenTheQueueRunsDry(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create orders", "load orders rate=150/s for=1m as=checkout",
		"worker start o1 queue=orders rate=50/s", "worker start o2 queue=orders rate=50/s",
		"wait throughput(orders) > 0")
	if got := labNumberOf(t, l, "throughput(orders)"); got > 105 {
		t.Errorf("two workers at 50/s finished %v a second", got)
	}
	mustRun(t, l, "wait oldest_age(orders) >= 0.3", "load stop")
}
