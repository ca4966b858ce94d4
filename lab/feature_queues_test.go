package lab

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/checker"
)

func workerNamed(t testing.TB, l *Lab, name string) WorkerState {
	t.Helper()
	for _, ws := range l.Snapshot().Workers {
		if ws.Name == name {
			return ws
		}
	}
	t.Fatalf("no worker %s in the snapshot", name)
	return WorkerState{}
}

// Queue commands that cannot run say why and leave the lab as it was:
// no queue, no worker, no send, nothing in the timeline.
func TestQueueCommandsCheckBeforeActing(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "queue create receipts visibility=2s")
	bad := []struct{ line, want string }{
		{"queue create receipts", "queue already exists"},
		{"queue create orders", `"orders" is a topic`},
		{"queue create jobs max-receives=3", "max-receives=3 needs a dead-letter queue"},
		{"queue create jobs dlq=jobs", "cannot be its own dead-letter queue"},
		{"queue create jobs rf=7", "rf=7 but the cluster has 3 nodes"},
		{"send nope", `unknown queue "nope"; the queues are receipts`},
		{"send orders", "orders is a topic, not a queue"},
		{"send receipts as=_x", "client names cannot start with '_'"},
		{"worker start w1 queue=recipts", `did you mean "receipts"?`},
		{"worker start producer queue=receipts", "producer is already a producer client"},
		{"worker start w1 queue=receipts service=wallet", "no wallet service is running"},
		{"worker start w1 queue=receipts retry=none max-attempts=3", "without retries there is one attempt"},
		{"worker restart w1", "no worker named w1"},
		{"worker stop w1", "no worker named w1"},
		{"redrive nope", `unknown queue "nope"`},
		{"redrive receipts to=nope", `to=nope: unknown queue "nope"`},
		{"elect n1 nope", `unknown queue "nope"`},
		{"kill leader(nope)", `unknown queue "nope"`},
	}
	before := len(l.Snapshot().Timeline)
	for _, tc := range bad {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
	if after := len(l.Snapshot().Timeline); after != before {
		t.Errorf("the timeline grew from %d to %d events; failed commands should leave no trace", before, after)
	}
	s := l.Snapshot()
	if len(s.Workers) != 0 || len(s.Cluster.Queues) != 1 || len(l.QueueSends()) != 0 {
		t.Errorf("after failed commands: workers %+v, %d queues, sends %+v", s.Workers, len(s.Cluster.Queues), l.QueueSends())
	}

	mustRun(t, l, "worker start w1 queue=receipts", "expect state(w1) == up")
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "worker start w1 queue=receipts"); err == nil || !strings.Contains(err.Error(), "w1 is already up") {
		t.Errorf("a second start: %v", err)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "consumer start w1 group=g topic=orders"); err == nil {
		t.Errorf("a consumer named like a worker started")
	}
	mustRun(t, l, "worker stop w1", "expect state(w1) == stopped")
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "worker stop w1"); err == nil || !strings.Contains(err.Error(), "w1 is stopped already") {
		t.Errorf("a second stop: %v", err)
	}
}

// A crashed worker's message comes back after the visibility timeout, in
// lab time, with receive count 2, and a restart brings the worker back.
func TestWorkerCrashRedeliversAfterVisibility(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=2s",
		`send receipts value="receipt 881"`,
		"worker start w1 queue=receipts crash=before-work",
		"wait state(w1) == crashed",
		"expect inflight(receipts) == 1",
		"expect processed(receipts) == 0")
	if ws := workerNamed(t, l, "w1"); ws.State != ClientCrashed || ws.Holding != "producer-1" {
		t.Errorf("w1 after its crash: %+v", ws)
	}
	mustRun(t, l, "worker restart w1",
		"expect state(w1) == up",
		"wait depth(receipts) == 0",
		"expect processed(receipts) == 1")
	ds := l.QueueDeliveries()
	if len(ds) != 2 || ds[0].ReceiveCount != 1 || ds[1].ReceiveCount != 2 || ds[0].MsgID != ds[1].MsgID {
		t.Fatalf("deliveries: %+v", ds)
	}
	if gap := ds[1].Received.Sub(ds[0].Received); gap < 2*time.Second {
		t.Errorf("redelivered %v after the first delivery; the visibility timeout is 2s", gap)
	}
	// The queue deletes the message before w1 hears its ack's answer.
	waitFor(t, 5*time.Second, "w1 to count its ack", func() bool { return workerNamed(t, l, "w1").Acks == 1 })
	ws := workerNamed(t, l, "w1")
	if ws.State != ClientUp || ws.Received != 2 || ws.Processed != 1 || ws.Acks != 1 || ws.Crash != "" {
		t.Errorf("w1: %+v", ws)
	}
	if !timelineHas(l, EventClient, "w1 crashed at before-work of producer-1 (receive 1)") {
		t.Errorf("the timeline does not tell of the crash")
	}
	rep, err := l.Check(ctxFor(t, 30*time.Second))
	if err != nil || rep.Confirmed != 1 || rep.Lost != 0 || rep.DuplicateDeliveries != 1 {
		t.Errorf("check: %+v %v", rep, err)
	}
}

// A worker with extend= keeps its message hidden past the visibility
// timeout for as long as its work lasts, and renewals(Q) counts each move
// of the deadline; without it a second worker is handed the message.
func TestWorkerExtendKeepsItsMessage(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=1s",
		`send receipts value="receipt 881"`,
		"worker start w1 queue=receipts work=2500ms extend=1s",
		"wait inflight(receipts) == 1",
		"worker start w1b queue=receipts work=2500ms extend=1s",
		"wait processed(receipts) >= 1",
		"wait depth(receipts) == 0",
		"expect delivered(receipts) == 1", // w1b never saw it
		// renewals every 0.5 s while 2.5 s of work lasts: 4, or 5 when
		// the last one meets the end of the work
		"expect renewals(receipts) >= 4",
		"expect renewals(receipts) <= 5",
		"queue create slips visibility=1s",
		`send slips value="slip 881"`,
		"worker start w2 queue=slips work=2500ms",
		"wait inflight(slips) == 1",
		"worker start w3 queue=slips work=2500ms",
		"wait delivered(slips) >= 2",
		"expect renewals(slips) == 0")
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect renewals(nope) == 0"); err == nil || !strings.Contains(err.Error(), "not a queue") {
		t.Errorf("renewals of an unknown queue: %v; want it to say it is not a queue", err)
	}
}

// A permanent failure goes to the DLQ at once; retries with backoff nack
// with a delay and dead-letter after max-attempts; the redrive's delivery
// is a replay, not a duplicate.
func TestWorkerRetriesThenDeadLetters(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create jobs visibility=5s dlq=jobs-dlq",
		`send jobs value="job BAD"`,
		"worker start w1 queue=jobs fail=poison:BAD retry=backoff base=100ms max-attempts=3",
		"wait depth(jobs-dlq) == 1",
		"expect dead_lettered == 1",
		"expect duplicate_deliveries == 2")
	ds := l.QueueDeliveries()
	if len(ds) != 3 || ds[2].ReceiveCount != 3 {
		t.Fatalf("deliveries: %+v", ds)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ws := workerNamed(t, l, "w1") // counted once the broker answered
		if ws.Nacks == 2 && ws.DeadLettered == 1 && ws.Failures == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w1: %+v", ws)
		}
	}
	mustRun(t, l, "worker stop w1", "worker start w2 queue=jobs", "redrive jobs-dlq", "wait depth(jobs-dlq) == 0", "wait depth(jobs) == 0",
		"expect processed(jobs) == 1", "expect duplicate_deliveries == 2", "expect dead_lettered == 0", "expect lost == 0")
	ds = l.QueueDeliveries()
	if last := ds[len(ds)-1]; !last.Replay || last.Client != "w2" {
		t.Errorf("the redriven delivery: %+v", last)
	}

	mustRun(t, l, "worker restart w2 fail=permanent", `send jobs value="job 2"`, "wait depth(jobs-dlq) == 1", "expect dead_lettered == 1")
	// The worker counts its dead-lettering once the broker has answered,
	// a moment after the queue shows it: poll for the count.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ws := workerNamed(t, l, "w2")
		if ws.DeadLettered == 1 && ws.Nacks == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("w2 after a permanent failure: %+v", ws)
		}
	}
}

// Sends a TTL drops count as expired, not lost; leader(Q) and epoch(Q)
// read the queue's raft group, and kill leader(Q) resolves it.
func TestQueueExpiryAndLeader(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create q ttl=1s", "send q count=3", "wait depth(q) == 0", "expect expired == 3", "expect lost == 0",
		"expect leader(q) != none", "expect epoch(q) >= 1", "expect oldest_age(q) == 0")
	leader := l.Snapshot().Cluster.Queues[0].Leader
	res := mustRun(t, l, "kill leader(q)")
	if !strings.Contains(strings.Join(res[0].Lines, " "), leader) && !timelineHas(l, EventCommand, "leader(q) → "+leader) {
		t.Errorf("kill leader(q) did not kill %s: %v", leader, res[0].Lines)
	}
	mustRun(t, l, "wait leader(q) != none", "send q", "restart "+leader, "elect "+leader+" q", "expect leader(q) == "+leader)
	for _, s := range l.QueueSends() {
		if s.Outcome != checker.Acknowledged {
			t.Errorf("send %+v", s)
		}
	}
}

// queue delete drops what the queue held, in flight too, counted as
// dropped (chosen, not lost); it waits for its workers to stop and for
// the queues that dead-letter into it to go first.
func TestQueueDelete(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "queue create jobs max-receives=2 dlq=jobs-dlq", "send jobs count=3", "worker start w1 queue=jobs work=1h",
		"wait inflight(jobs) == 1")
	for _, tc := range []struct{ line, want string }{
		{"queue delete jobs-dlq", "dead-letter queue of jobs"},
		{"queue delete jobs", "worker w1 is working it"},
		{"queue delete nope", `unknown queue "nope"`},
	} {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
	mustRun(t, l, "worker stop w1", "queue delete jobs", "queue delete jobs-dlq")
	r, err := l.Check(ctxFor(t, 30*time.Second))
	if err != nil || r.Dropped != 3 || r.Lost != 0 {
		t.Errorf("after deleting jobs: %+v, %v; want its 3 messages dropped (one of them in flight), none lost", r, err)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "send jobs"); err == nil || !strings.Contains(err.Error(), "unknown queue") {
		t.Errorf("send to the deleted queue: %v; want unknown queue", err)
	}
	mustRun(t, l, "queue create jobs", "send jobs", "expect depth(jobs) == 1")
}

// rate= spaces a worker's messages in lab time; a lost ack brings the
// message back after its visibility timeout, a duplicate delivery.
func TestWorkerRateAndLostAck(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create q visibility=1s", "send q count=5", "worker start w1 queue=q rate=20/s", "wait depth(q) == 0",
		"expect processed(q) == 5", "expect duplicate_deliveries == 0")
	ds := l.QueueDeliveries()
	if len(ds) != 5 {
		t.Fatalf("deliveries: %+v", ds)
	}
	if span := ds[4].Time.Sub(ds[0].Time); span < 190*time.Millisecond {
		t.Errorf("five messages at 20/s took %v of lab time; want at least 200ms", span)
	}
	mustRun(t, l, "drop next ack from w1", "send q", "wait depth(q) == 0", "expect duplicate_deliveries == 1", "expect lost == 0")
	if ws := workerNamed(t, l, "w1"); ws.Received != 7 || ws.Processed != 7 {
		t.Errorf("w1: %+v", ws)
	}
}

// A worker's receives, like its acks, take no lab time in the model: it
// asks for its next message as soon as it is done with the last, and lab
// time holds while the broker answers. A slow link to the queue's leader
// stands in here for a machine slow to run them: 40 ms each way on every
// receive would cost a worker of work=100ms almost half its pace.
func TestWorkerReceivesTakeNoLabTime(t *testing.T) {
	t.Parallel() // counted in lab time, which holds for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create jobs", "send jobs count=30 as=shop")
	leader, err := readValue(t, l, "leader(jobs)")
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, l, "slow "+leader+" 40ms", "pause", "worker start w1 queue=jobs work=100ms", "resume", "pause in=1s")
	// Ten messages of 100 ms fit in a second. A hold lets lab time run
	// clock.Brisk past the moment it came on, so each message may cost up
	// to 20 ms more: at least eight. Paying the link's 80 ms round trip
	// on each receive would leave five.
	if got := labNumberOf(t, l, "processed(jobs)"); got < 8 || got > 10 {
		t.Errorf("after 1 s of lab time a worker of work=100ms behind a 40 ms link processed %v messages; want 8 to 10", got)
	}
}

// A worker's start returns once its first receive is answered: a message
// sent before two workers start goes to the one started first, every
// time, though the second asks at once too.
func TestWorkerStartedFirstTakesWhatWasWaiting(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=5s")
	const rounds = 5
	for i := 1; i <= rounds; i++ {
		mustRun(t, l, fmt.Sprintf(`send receipts value="receipt %d"`, i),
			fmt.Sprintf("worker start a%d queue=receipts work=200ms", i),
			fmt.Sprintf("worker start b%d queue=receipts work=200ms", i),
			fmt.Sprintf("wait processed(receipts) == %d", i),
			fmt.Sprintf("worker stop a%d", i),
			fmt.Sprintf("worker stop b%d", i))
	}
	ds := l.QueueDeliveries()
	if len(ds) != rounds {
		t.Fatalf("%d deliveries, want %d: %+v", len(ds), rounds, ds)
	}
	for i, d := range ds {
		if want := fmt.Sprintf("a%d", i+1); d.Client != want {
			t.Errorf("receipt %d went to %s; %s started first, with the receipt waiting", i+1, d.Client, want)
		}
	}
}

// Workers on a FIFO queue take turns: a message group that comes free
// goes to the worker that has waited longest for one, not to the worker
// that freed it and asks again at once. Six workers on four orders: the
// first four take the orders as they start, the two that waited take the
// next two updates, and every worker works.
func TestFIFOWorkersTakeTurns(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	lines := []string{"queue create updates fifo=true"}
	for o := 881; o <= 884; o++ {
		lines = append(lines, fmt.Sprintf(`send updates key=order-%d group=order-%d value="order %d update {n}" count=5`, o, o, o))
	}
	lines = append(lines, "pause")
	for i := 1; i <= 6; i++ {
		lines = append(lines, fmt.Sprintf("worker start w%d queue=updates work=1s", i))
	}
	mustRun(t, l, append(lines, "resume", "wait processed(updates) == 20", "expect order_violations == 0")...)
	var order []string
	worked := map[string]int{}
	for _, d := range l.QueueDeliveries() {
		order = append(order, d.Client)
		worked[d.Client]++
	}
	if len(order) != 20 {
		t.Fatalf("the updates went to %v; want 20 deliveries", order)
	}
	waited := slices.Sorted(slices.Values(order[4:6])) // w5 and w6 wait from the start, in either order
	if strings.Join(order[:4], " ") != "w1 w2 w3 w4" || strings.Join(waited, " ") != "w5 w6" {
		t.Errorf("the updates went to %v; want w1 to w4 first, as they started, then w5 and w6, which waited", order)
	}
	for i := 1; i <= 6; i++ {
		if w := fmt.Sprintf("w%d", i); worked[w] == 0 {
			t.Errorf("%s worked no update (%v); the workers take turns", w, worked)
		}
	}
}
