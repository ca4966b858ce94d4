package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// state is what a failed command must not change: the cluster's shape, the
// clients, the history, the generators, the clock and the timeline.
type state struct {
	nodes     []broker.NodeState
	cut       [][2]string
	topics    []string
	leaders   []string
	hwms      []int64
	clients   []ClientState
	loads     []LoadState
	history   int
	speed     float64
	paused    bool
	timeline  int
	services  []string
	consumers []ConsumerState
}

func stateOf(l *Lab) state {
	s := l.Snapshot()
	st := state{nodes: s.Cluster.Nodes, cut: s.Cluster.CutLinks, clients: s.Clients, loads: s.Loads,
		history: len(l.History()), speed: s.Speed, paused: s.Paused, timeline: len(s.Timeline), consumers: s.Consumers}
	for _, svc := range s.Services {
		st.services = append(st.services, svc.Name+" "+svc.State)
		for _, t := range svc.Tables {
			st.services = append(st.services, fmt.Sprintf("%s %d %v", t.Name, t.Total, t.Rows))
		}
	}
	for _, t := range s.Cluster.Topics {
		st.topics = append(st.topics, t.Config.Name)
		for _, p := range t.Partitions {
			st.leaders = append(st.leaders, p.Leader)
			for _, r := range p.Replicas {
				st.hwms = append(st.hwms, r.HighWatermark)
			}
		}
	}
	return st
}

// Bad input never loses state: a command that cannot run returns a clear
// error and leaves the lab as it was, timeline included.
func TestFailedCommandLeavesLabAsItWas(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "elect n1 orders/0", "produce orders key=881 as=shop", "kill n3")
	waitFor(t, 10*time.Second, "followers to learn the commit", func() bool {
		for _, tp := range l.Snapshot().Cluster.Topics {
			for _, p := range tp.Partitions {
				hwm := int64(-1)
				for _, r := range p.Replicas {
					if !r.Up {
						continue
					}
					if r.HighWatermark != r.LogEnd || hwm >= 0 && r.HighWatermark != hwm {
						return false
					}
					hwm = r.HighWatermark
				}
			}
		}
		return true
	})
	before := stateOf(l)
	cases := []struct{ line, want string }{
		{"kil n1", `unknown command "kil"; did you mean "kill"?`},
		{"produce payments key=1", `unknown topic "payments"; the topics are`},
		{"produce ordrs key=1", `did you mean "orders"?`},
		{"produce orders partition=7", "orders has partitions 0 to 1, not 7"},
		{"produce orders as=_checker", "client names cannot start with '_'"},
		{"kill n9", `unknown node "n9"; the nodes are n1, n2, n3`},
		{"kill n3", "node is down already; restart it first"},
		{"restart n1", "node is up already; kill it first"},
		{"kill leader(orders/7)", "orders has partitions 0 to 1, not 7"},
		{"kill leader(orders)", "orders is a topic; name one of its 2 partitions, e.g. orders/0"},
		{"isolate leader(receipts)", `unknown queue "receipts": there are no queues yet; create one with queue create receipts`},
		{"elect n9 orders/0", `unknown node "n9"`},
		{"elect n3 orders/0", "elect n3 orders/0: node is down; restart it first"},
		{"partition n1 | leader(orders/0)", "n1 and leader(orders/0) are both n1"},
		{"slow n7 200ms", `unknown node "n7"`},
		{"topic create orders partitions=1", "topic already exists"},
		{"topic create big partitions=1 rf=5", "rf=5 but the cluster has 3 nodes"},
		{"drop next reply to shpo", `no client named "shpo"; the clients are producer, shop (as=NAME makes one); did you mean "shop"?`},
		{"wait hwm(payments/0) == 1", `unknown topic "payments"`},
		{"expect hwm(orders/0@n9) == 1", `unknown node "n9"`},
		{"expect state(nobody) == up", `state(nobody): no node or client named "nobody"`},
		{"load payments rate=10/s for=1s", `unknown topic "payments"`},
		{"load stop nothing", "no load has run"},
		{"consumer start c1 group=g topic=nope", `consumer start c1: unknown topic "nope"; the topics are orders`},
		{"consumer start c1 group=g topic=orders service=wallet", "no wallet service is running"},
		{"consumer restart c1", "no consumer named c1"},
		{"queue create receipts max-receives=3", "max-receives=3 needs a dead-letter queue to move messages to; add dlq=receipts-dlq"},
		{"queue create orders", `queue already exists: "orders" is a topic`},
		{"send receipts", `send: unknown queue "receipts": there are no queues yet`},
		{"worker start w1 queue=receipts", `worker start w1: unknown queue "receipts"`},
		{"worker stop w1", "no worker named w1"},
		{"service start orders mode=outbox crash=after-charge", "crash=after-charge: orders in mode outbox has the crash points after-commit, before-mark, after-publish"},
		{"service start wallet strategy=dedupe-table crash=before-mark", "crash=before-mark: the wallet with strategy dedupe-table has one crash point, after-credit"},
		{"service start checkout", "checkout charges its buyers through the payments service; start that first: service start payments"},
		{"service restart wallet", "service restart wallet: no wallet service is running; start it with service start wallet"},
		{"service stop orders", "service stop orders: no orders service is running"},
		{`sql orders "SELECT 1"`, "sql orders: no orders service is running; start it with service start orders"},
		{"order 881", "order: no orders service is running; start it with service start orders"},
		{"seek g orders/0 to=earliest", `unknown group "g": there are no groups yet`},
		{"redrive receipts-dlq", `redrive: unknown queue "receipts-dlq"`},
	}
	for _, tc := range cases {
		_, err := l.Exec(ctxFor(t, 10*time.Second), tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to say %q", tc.line, err, tc.want)
		}
		if after := stateOf(l); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s changed the lab:\nbefore %+v\nafter  %+v", tc.line, before, after)
		}
	}
	for _, line := range []string{"worker start w1 queue=receipts", "expect depth(receipts) == 0"} {
		if _, err := l.Exec(context.Background(), line); !errors.Is(err, broker.ErrUnknownQueue) {
			t.Errorf("%s: %v; want ErrUnknownQueue", line, err)
		}
	}
}

// The checker finds a planted loss (acks=1 on a leader cut off before it
// replicates) and none when acks=all and idempotence ride out a leader kill.
func TestCheckerFindsPlantedLoss(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n1 orders/0",
		"produce orders key=881 acks=all", "partition n1 | n2,n3", "produce orders key=881 count=3 batch=3 acks=1 as=fast",
		"wait leader(orders/0) != n1", "wait leader(orders/0) != none", "heal")
	rep, err := l.Check(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confirmed != 4 || rep.Lost != 3 || rep.Unknown != 0 || len(rep.LostMessages) != 3 {
		t.Fatalf("report %+v; want 4 confirmed, the 3 acks=1 writes lost", rep)
	}
	for i, m := range rep.LostMessages {
		if m.Client != "fast" || m.Where != "orders/0" || m.Offset != int64(1+i) {
			t.Errorf("lost message %d: %+v; want fast's write at orders/0 offset %d", i, m, 1+i)
		}
	}
	if s := l.Snapshot(); s.Report == nil || s.Report.Lost != 3 {
		t.Errorf("snapshot carries report %+v; want the last check", s.Report)
	}
}

func TestCheckerNoLossWithIdempotentAcksAll(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "elect n1 orders/0", "load orders rate=300/s for=2s key=k{n} idempotent=true batch=4",
		"wait hwm(orders/0) >= 50", "kill leader(orders/0)", "wait state(load) == stopped timeout=30s")
	// The killed leader is n1 unless leadership moved before the kill on
	// a busy machine: restart the node that is down, whichever it is.
	for _, n := range l.Snapshot().Cluster.Nodes {
		if !n.Up {
			mustRun(t, l, "restart "+n.ID)
		}
	}
	rep, err := l.Check(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 0 || rep.DuplicateWrites != 0 || rep.Confirmed < 550 {
		t.Fatalf("report %+v; want ≥550 confirmed, none lost, none written twice", rep)
	}
	if rep.Confirmed+rep.Unknown != 600 {
		t.Errorf("confirmed %d + unknown %d; want all 600 messages accounted for", rep.Confirmed, rep.Unknown)
	}
}

// Node references resolve when the command runs, not when it is parsed.
func TestNodeRefsResolveAtExecution(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n2 orders/0")
	res := mustRun(t, l, "kill leader(orders/0)")
	if s := l.Snapshot(); s.Cluster.Nodes[1].Up {
		t.Fatalf("kill leader(orders/0) after elect n2 left n2 up: %+v (%v)", s.Cluster.Nodes, res)
	}
	mustRun(t, l, "wait leader(orders/0) != none", "restart n2", "wait hwm(orders/0@n2) == hwm(orders/0)")
	lead := l.Snapshot().Cluster.Topics[0].Partitions[0].Leader
	want := "n1"
	if lead == "n1" {
		want = "n2"
	}
	mustRun(t, l, "elect follower(orders/0) orders/0")
	if got := l.Snapshot().Cluster.Topics[0].Partitions[0].Leader; got != want {
		t.Errorf("elect follower(orders/0) with %s leading: %s leads; want the first follower, %s", lead, got, want)
	}
	ev := l.tl.Recent(100)
	found := false
	for _, e := range ev {
		found = found || e.Kind == EventCommand && e.Text == "elect follower(orders/0) → "+want+" orders/0"
	}
	if !found {
		t.Errorf("the timeline does not show what follower(orders/0) resolved to: %v", ev)
	}
}

func TestWaitAndExpectSayWhatTheValueWas(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders count=2")
	_, err := l.Exec(ctxFor(t, 10*time.Second), "wait hwm(orders/0) == 5 timeout=200ms")
	if err == nil || err.Error() != "wait hwm(orders/0) == 5: timed out after 200ms; hwm(orders/0) is 2" {
		t.Errorf("timed-out wait: %v", err)
	}
	_, err = l.Exec(ctxFor(t, 10*time.Second), "expect hwm(orders/0) > 2")
	var ee *ExpectationError
	if !errors.As(err, &ee) || ee.Got != "hwm(orders/0) is 2" {
		t.Errorf("failed expect: %#v", err)
	}
	res := mustRun(t, l, "expect hwm(orders/0) == 2", "expect confirmed == hwm(orders/0)")
	if res[1].Lines[0] != "✓ confirmed == hwm(orders/0) (confirmed is 2, hwm(orders/0) is 2)" {
		t.Errorf("expect says %q", res[1].Lines)
	}
	mustRun(t, l, "kill n3")
	_, err = l.Exec(ctxFor(t, 10*time.Second), "expect hwm(orders/0@n3) == 2")
	if !errors.As(err, &ee) || ee.Got != "hwm(orders/0@n3): n3 is down" {
		t.Errorf("expect on a down replica: %v", err)
	}
}

// A wait runs while other commands change the lab: a TUI kills a node
// while a lesson waits for it.
func TestWaitWhileAnotherCommandRuns(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n1 orders/0")
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, werr = l.Exec(ctxFor(t, 30*time.Second), "wait leader(orders/0) != n1 timeout=20s")
	}()
	waitFor(t, 5*time.Second, "the wait to begin", func() bool {
		for _, e := range l.tl.Recent(50) {
			if e.Kind == EventCommand && strings.HasPrefix(e.Text, "wait ") {
				return true
			}
		}
		return false
	})
	mustRun(t, l, "kill n1")
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
}

func TestProduceClientsAndTemplates(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	res := mustRun(t, l, "topic create orders partitions=3", `produce orders key=order-{n} value="order {n} placed" count=3 as=shop`,
		"produce orders count=12 acks=0", "produce orders key=881 idempotent=true")
	if len(res[1].Lines) != 3 || !strings.HasPrefix(res[1].Lines[0], "shop-1 orders key=order-1 → acknowledged at orders/") {
		t.Errorf("produce says %q", res[1].Lines)
	}
	if len(res[2].Lines) != 1 || !strings.HasPrefix(res[2].Lines[0], "12 messages from producer to orders: 12 sent") {
		t.Errorf("a produce of 12 sums up in one line: %q", res[2].Lines)
	}
	h := l.History()
	if len(h) != 16 {
		t.Fatalf("history has %d produces, want 16", len(h))
	}
	for i := 0; i < 3; i++ {
		p := h[i]
		want := Produce{Seq: i + 1, MsgID: "shop-" + string(rune('1'+i)), Client: "shop", Topic: "orders", Key: "order-" + string(rune('1'+i)),
			Keyed: true, Value: "order " + string(rune('1'+i)) + " placed", Acks: "all", Outcome: checker.Acknowledged}
		if p.Seq != want.Seq || p.MsgID != want.MsgID || p.Key != want.Key || p.Value != want.Value || p.Outcome != want.Outcome || p.Offset < 0 {
			t.Errorf("history[%d] = %+v; want %+v", i, p, want)
		}
	}
	if h[3].MsgID != "producer-1" || h[3].Outcome != checker.Sent || h[3].Value != "producer-1" {
		t.Errorf("an acks=0 produce without a value: %+v", h[3])
	}
	s := l.Snapshot()
	if len(s.Clients) != 2 || s.Clients[0].Name != "producer" || s.Clients[0].Sent != 12 || s.Clients[0].Acknowledged != 1 ||
		len(s.Clients[0].ProducerIDs) != 1 || s.Clients[1].Name != "shop" || s.Clients[1].Acknowledged != 3 {
		t.Errorf("clients %+v", s.Clients)
	}
	rep, err := l.Check(ctxFor(t, time.Minute))
	if err != nil || rep.Confirmed != 4 || rep.Lost != 0 {
		t.Errorf("check: %+v %v; acks=0 sends are never confirmed", rep, err)
	}
}

// A load follows lab time: at 10x, a 5 s load takes about half a second.
func TestLoadFollowsSpeedAndStops(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "speed 10x")
	start := time.Now()
	mustRun(t, l, "load orders rate=100/s for=5s", "wait state(load) == stopped timeout=20s")
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("a 5 s load at 10x took %v of wall time", d)
	}
	if ld := l.Snapshot().Loads[0]; ld.Sent != 500 || ld.Acknowledged != 500 || ld.State != LoadStopped {
		t.Errorf("load %+v; want 500 sent and acknowledged", ld)
	}
	mustRun(t, l, "speed 1x", "load orders rate=50/s for=1m as=slow", "wait hwm(orders/0) >= 510", "load stop slow",
		"wait state(slow) == stopped")
	ld := l.Snapshot().Loads[1]
	if ld.Sent >= ld.Total || ld.Sent != ld.Acknowledged {
		t.Errorf("stopped load %+v; want it stopped early with every sent message answered", ld)
	}
	mustRun(t, l, "pause")
	before := l.Clock().Now()
	mustRun(t, l, "produce orders")
	if !l.Clock().Now().Equal(before) {
		t.Error("lab time moved while paused")
	}
	// Paused, no lab time can pass: pause in= says so rather than wait for ever.
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "pause in=1s"); err == nil || !strings.Contains(err.Error(), "resume first") {
		t.Errorf("pause in=1s while paused: %v; want an error saying to resume first", err)
	}
	mustRun(t, l, "resume", "pause in=100ms")
	if _, paused := l.Clock().Speed(); !paused || l.Clock().Now().Sub(before) < 100*time.Millisecond {
		t.Errorf("pause in=100ms after resume: lab time %v on, paused %v; want at least 100ms on, and paused", l.Clock().Now().Sub(before), paused)
	}
	// One that runs out of time says how far lab time got, and leaves
	// no stop armed: lab time runs on past where it would have stopped.
	mustRun(t, l, "resume", "speed 0.1x")
	from := l.Clock().Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Exec(ctx, "pause in=30ms"); err == nil || !strings.Contains(err.Error(), "of lab time still to pass after") {
		t.Errorf("pause in=30ms at 0.1x with 20ms to wait: %v; want an error saying how much lab time was left", err)
	}
	mustRun(t, l, "speed 1x")
	for deadline := time.Now().Add(10 * time.Second); l.Clock().Now().Sub(from) < 200*time.Millisecond; {
		if _, paused := l.Clock().Speed(); paused {
			t.Fatalf("lab time stopped %v after the timed-out pause in=30ms began: its stop was left armed", l.Clock().Now().Sub(from))
		}
		if time.Now().After(deadline) {
			t.Fatal("lab time did not run 200ms in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestClusterRestartsEmpty(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders as=shop")
	// The lab's folder holds every replica's segment files, as Kafka's would.
	dir := l.LogDir()
	for _, n := range []string{"n1", "n2", "n3"} {
		waitFor(t, 10*time.Second, n+"'s copy of orders/0 on disk", func() bool {
			_, err := os.Stat(filepath.Join(dir, n, "orders-0", "00000000000000000000.log"))
			return err == nil
		})
	}
	mustRun(t, l, "speed 10x", "pause", "cluster nodes=5 timing=fast")
	if _, err := os.Stat(filepath.Join(dir, "n1", "orders-0")); !os.IsNotExist(err) {
		t.Errorf("the new cluster kept the old one's orders-0 folder: %v", err)
	}
	s := l.Snapshot()
	if s.Speed != 1 || s.Paused {
		t.Errorf("after cluster: speed %v, paused %v; a new cluster starts at 1x, running", s.Speed, s.Paused)
	}
	if len(s.Cluster.Nodes) != 5 || len(l.History()) != 0 || len(s.Clients) != 1 || s.Clients[0].Name != "producer" {
		t.Errorf("after cluster nodes=5: %d nodes, history %d, clients %+v", len(s.Cluster.Nodes), len(l.History()), s.Clients)
	}
	for _, tp := range s.Cluster.Topics {
		if tp.Config.Name == "orders" {
			t.Errorf("topic orders survived the new cluster")
		}
	}
	l.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the lab's temporary log folder outlived it: %v", err)
	}
}

func TestSubscribeSeesCommandsAndBrokerEvents(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	sub := l.Subscribe(1024)
	defer sub.Close()
	mustRun(t, l, "topic create orders partitions=1", "kill leader(orders/0)")
	var kinds []string
	for {
		select {
		case e := <-sub.C:
			if e.Kind == EventCommand || e.Broker != nil && e.Broker.Kind == broker.EventNodeKilled {
				kinds = append(kinds, string(e.Kind)+": "+e.Text)
			}
			continue
		default:
		}
		break
	}
	if len(kinds) != 3 || !strings.HasPrefix(kinds[1], "command: kill leader(orders/0) → n") || !strings.HasPrefix(kinds[2], "broker: n") {
		t.Errorf("events %q", kinds)
	}
}

func TestHelpMarksNothingUnavailable(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	res := mustRun(t, l, "help", "help worker")
	all := strings.Join(res[0].Lines, "\n")
	if !strings.Contains(all, "kill") || strings.Contains(all, "not available yet") {
		t.Errorf("help:\n%s", all)
	}
	if strings.Contains(all, "produce  write messages to a topic and wait for their outcomes (not") {
		t.Error("help marks produce as unavailable")
	}
	if got := strings.Join(res[1].Lines, "\n"); !strings.Contains(got, "queue=QUEUE") || strings.Contains(got, "not available yet") {
		t.Errorf("help worker:\n%s", got)
	}
	for _, s := range command.Specs() {
		if _, err := l.Exec(context.Background(), "help "+s.Name); err != nil {
			t.Errorf("help %s: %v", s.Name, err)
		}
	}
}

// A cluster command ends the loads of the cluster it replaces, and the
// timeline says so: a load's last line is said even as its world retires.
func TestClusterCommandSaysALoadStopped(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "load orders rate=20/s for=60s", "wait hwm(orders/0) > 0", "cluster nodes=1")
	if !timelineHas(l, EventLoad, "load orders as load stopped: ") {
		t.Error("the load's last line is not in the timeline after the cluster command")
	}
}
