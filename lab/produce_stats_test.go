package lab

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/command"
)

// readStat reads one lab value as a placeholder does; the text is the
// left side of an expect.
func readStat(t *testing.T, l *Lab, text string) (string, error) {
	t.Helper()
	cmd, err := command.Parse("expect " + text + " == 0")
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return l.Value(ctxFor(t, 10*time.Second), cmd.(command.Expect).Cond.Left)
}

func mustStat(t *testing.T, l *Lab, text string) float64 {
	t.Helper()
	s, err := readStat(t, l, text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s is %q, not a number", text, s)
	}
	return f
}

// One request carries one batch per partition: 250 orders in batches of
// 100 are 3 requests on one partition, and 2 + 2 when they round-robin over
// two. Each produce command replaces its client's numbers.
func TestProduceRequestsAndRate(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l,
		"topic create orders partitions=1",
		"topic create clicks partitions=2",
		"produce orders count=7 batch=1 as=one",
		"produce orders count=250 batch=100 as=hundred",
	)
	if got := mustStat(t, l, "requests(one)"); got != 7 {
		t.Errorf("requests(one) = %v, want 7", got)
	}
	if got := mustStat(t, l, "requests(hundred)"); got != 3 {
		t.Errorf("requests(hundred) = %v, want 3", got)
	}
	for _, v := range []string{"produce_rate(one)", "produce_rate(hundred)", "speedup(hundred, one)"} {
		if got := mustStat(t, l, v); got <= 0 {
			t.Errorf("%s = %v, want above 0", v, got)
		}
	}
	mustRun(t, l, "produce clicks count=250 batch=100 as=hundred")
	if got := mustStat(t, l, "requests(hundred)"); got != 4 {
		t.Errorf("requests(hundred) after 250 over two partitions = %v, want 4", got)
	}
	mustRun(t, l, "expect requests(hundred) == 4", "expect requests(one) == 7")
}

// The requests are each batch's attempts, counted once per batch, per
// partition, in the order the producer sends them.
func TestNewProduceRun(t *testing.T) {
	acked := func(p, attempts int) broker.ProduceResult {
		return broker.ProduceResult{Partition: p, Outcome: broker.OutcomeAcked, Attempts: attempts}
	}
	res := []broker.ProduceResult{
		acked(0, 1), acked(1, 3), acked(0, 1), acked(1, 3), // first batch of each
		acked(0, 2), acked(1, 1), // second batch of each: p0 retried once
		{Partition: 0, Outcome: broker.OutcomeFailed}, // never routed: no request
	}
	t0 := time.Unix(0, 0)
	pr := newProduceRun(res, 2, t0, t0.Add(2*time.Second))
	if pr.requests != 1+3+2+1 || pr.acked != 6 || pr.messages != 7 {
		t.Errorf("got %+v; want 7 requests, 6 acked of 7", pr)
	}
	if pr := newProduceRun(res[:2], 0, t0, t0); pr.requests != 4 {
		t.Errorf("batch 0 counts as 1: got %d requests, want 4", pr.requests)
	}
	res[4].Duplicate = true // the retry of p0's second batch was recognised
	if pr := newProduceRun(res, 2, t0, t0); pr.repeats != 1 {
		t.Errorf("recognised retries: got %d, want 1", pr.repeats)
	}
}

// latency(CLIENT) is lab time per request. A slow link to the followers
// shows in acks=all's, which waits for a follower's copy: one round trip
// to the nearer one. It does not show in acks=1's: the leader answers
// alone, and the producer asked which node leads once, not per request.
//
// Not parallel: the latencies are wall time at 1x, and the package's
// parallel tests (a flash sale at 10,000 orders a second of wall time
// among them) would share the process's threads with the slow links'
// timers and raft's goroutines, adding tens of milliseconds that are
// the other tests', not the links'.
func TestProduceLatency(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n1 orders/0",
		"slow n2 10ms", "slow n3 10ms",
		"produce orders count=20 batch=1 acks=all as=safe",
		"produce orders count=20 batch=1 acks=1 as=leader",
		"heal",
		"produce orders count=20 batch=1 acks=all as=quick")
	safe, leader, quick := mustStat(t, l, "latency(safe)"), mustStat(t, l, "latency(leader)"), mustStat(t, l, "latency(quick)")
	if safe < quick+15 || safe > quick+40 {
		t.Errorf("latency(safe) %v ms with followers 10 ms away each way, latency(quick) %v ms: want one round trip, about 20 ms, more", safe, quick)
	}
	if leader > 5 {
		t.Errorf("latency(leader) %v ms: acks=1 waits for no follower, and the leader's links are not slow", leader)
	}
}

func TestProduceStatsBadInput(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1")

	_, err := readStat(t, l, "requests(one)")
	var u unnamedYet
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "no client has produced yet; produce TOPIC as=one") {
		t.Errorf("before any produce: %v", err)
	}
	mustRun(t, l, "produce orders count=3 as=hundred", "consumer start billing-1 group=billing topic=orders", "wait lag(billing) == 0")
	if _, err := readStat(t, l, "requests(hundre)"); !errors.As(err, &u) || !strings.Contains(err.Error(), `no client named "hundre" has produced; the clients that have are hundred`) || !strings.Contains(err.Error(), `did you mean "hundred"?`) {
		t.Errorf("a misspelt client: %v", err)
	}
	if _, err := readStat(t, l, "produce_rate(billing-1)"); !isNotNow(err) || !strings.Contains(err.Error(), "billing-1 has run no produce command yet") {
		t.Errorf("a consumer: %v", err)
	}
	if _, err := readStat(t, l, "speedup(hundred, nobody)"); err == nil || !strings.Contains(err.Error(), `speedup(hundred, nobody): no client named "nobody"`) {
		t.Errorf("speedup over an unknown client: %v", err)
	}

	// acks=0 gets nothing acknowledged: a rate of 0, and nothing is a
	// multiple of it.
	mustRun(t, l, "produce orders count=3 acks=0 as=blind")
	if got := mustStat(t, l, "produce_rate(blind)"); got != 0 {
		t.Errorf("produce_rate(blind) = %v, want 0", got)
	}
	if _, err := readStat(t, l, "speedup(hundred, blind)"); err == nil || !strings.Contains(err.Error(), "blind got no message acknowledged") {
		t.Errorf("speedup over a rate of 0: %v", err)
	}

	// With lab time paused a produce takes no lab time at all.
	mustRun(t, l, "pause", "produce orders count=3 as=still")
	if _, err := readStat(t, l, "produce_rate(still)"); err == nil || isNotNow(err) || !strings.Contains(err.Error(), "lab time was paused") {
		t.Errorf("a produce while paused: %v", err)
	}
	if got := mustStat(t, l, "requests(still)"); got != 3 {
		t.Errorf("requests(still) = %v, want 3", got)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect produce_rate(still) > 0"); err == nil || !strings.Contains(err.Error(), "lab time was paused") {
		t.Errorf("an expect on it: %v", err)
	}
}

// The controller is a raft group like a partition: leader(controller) and
// epoch(controller) read it, kill leader(controller) resolves to its
// node, and a new controller leader takes a higher epoch.
func TestControllerValues(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "wait leader(controller) != none")
	before := mustStat(t, l, "epoch(controller)")
	mustRun(t, l, "kill leader(controller)", "wait leader(controller) != none",
		"expect epoch(controller) > "+strconv.FormatFloat(before, 'f', -1, 64),
		"topic create payments partitions=1", "expect leader(payments/0) != none")
}

// elect NODE P epoch=N moves leadership round until NODE leads at epoch
// N, one election at a time, and refuses an epoch already passed.
func TestElectToAnEpoch(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n1 orders/0 epoch=7",
		"expect epoch(orders/0) == 7", "expect leader(orders/0) == n1")
	_, err := l.Exec(ctxFor(t, 10*time.Second), "elect n2 orders/0 epoch=5")
	if err == nil || !strings.Contains(err.Error(), "at epoch 7 already, and epochs only grow") {
		t.Errorf("an epoch already passed: %v", err)
	}
}

// recognised_all counts a load's recognised retries as well as a produce
// command's, which recognised does not: a load whose reply is lost retries,
// and an idempotent partition answers the retry with the first offset.
func TestRecognisedAllCountsLoads(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	if _, err := readStat(t, l, "recognised_all(checkout)"); err == nil || !strings.Contains(err.Error(), `no client named "checkout"`) {
		t.Errorf("recognised_all of a client that never produced: %v", err)
	}
	mustRun(t, l,
		"topic create orders partitions=1",
		"produce orders key=881 acks=all idempotent=true as=checkout",
		"drop next reply to checkout",
		"load orders rate=50/s for=200ms key=881 acks=all idempotent=true as=checkout",
		"wait elapsed(checkout) >= 0.2",
		"wait hwm(orders/0) >= 11",
	)
	waitFor(t, 10*time.Second, "the load's retry to be answered", func() bool {
		s, err := readStat(t, l, "recognised_all(checkout)")
		return err == nil && s == "1"
	})
	if got := mustStat(t, l, "hwm(orders/0)"); got != 11 {
		t.Errorf("hwm = %v, want 11: the retried message written once", got)
	}
	if got := mustStat(t, l, "recognised(checkout)"); got != 0 {
		t.Errorf("recognised(checkout) = %v: it reads the produce command, whose reply came back", got)
	}
}
