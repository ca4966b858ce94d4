package broker

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// committedLog copies one live replica's whole committed log.
func committedLog(t testing.TB, c *Cluster, node string, tp TopicPartition) []Record {
	t.Helper()
	rep := c.replicaOn(node, tp.String())
	if rep == nil {
		t.Fatalf("%s has no live replica of %s", node, tp)
	}
	rep.partition().mu.RLock()
	defer rep.partition().mu.RUnlock()
	l := rep.partition().log
	var out []Record
	for off := l.StartOffset(); off < l.EndOffset(); {
		recs, err := l.Read(off, 1000)
		if err != nil {
			t.Fatalf("read %s on %s at %d: %v", tp, node, off, err)
		}
		for _, r := range recs {
			out = append(out, toRecord(r))
		}
		off += int64(len(recs))
	}
	return out
}

// waitConverged waits until every replica of tp is up, and has committed
// and written exactly what the leader has.
func waitConverged(t testing.TB, c *Cluster, tp TopicPartition) {
	t.Helper()
	waitFor(t, 30*time.Second, "replicas of "+tp.String()+" to converge", func() bool {
		p := partitionState(c.Snapshot(), tp)
		if p.Leader == "" {
			return false
		}
		var hwm int64 = -1
		for _, r := range p.Replicas {
			if !r.Up || r.LogEnd != r.HighWatermark {
				return false
			}
			if hwm >= 0 && r.HighWatermark != hwm {
				return false
			}
			hwm = r.HighWatermark
		}
		return true
	})
}

// assertReplicasIdentical checks every replica holds the same committed log.
func assertReplicasIdentical(t testing.TB, c *Cluster, tp TopicPartition) []Record {
	t.Helper()
	p := partitionState(c.Snapshot(), tp)
	var first []Record
	for i, r := range p.Replicas {
		log := committedLog(t, c, r.Node, tp)
		if i == 0 {
			first = log
			continue
		}
		if len(log) != len(first) {
			t.Fatalf("%s: replica on %s has %d committed records, on %s %d", tp, r.Node, len(log), p.Replicas[0].Node, len(first))
		}
		for k := range log {
			a, b := first[k], log[k]
			if a.Offset != b.Offset || a.Epoch != b.Epoch || a.MsgID != b.MsgID || !bytes.Equal(a.Value, b.Value) {
				t.Fatalf("%s: replicas differ at offset %d: %+v vs %+v", tp, a.Offset, a, b)
			}
		}
	}
	return first
}

// Acceptance 1: acks=all with an idempotent producer loses nothing and
// duplicates nothing while the partition leader is killed mid-way.
func TestIdempotentAcksAllSurvivesLeaderKill(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: true, BatchSize: 10})
	const total = 2000
	var killed string
	acked := map[string]bool{}
	for start := 0; start < total; start += 50 {
		if start == total/2 {
			killed = c.Leader(tp)
			if err := c.Kill(killed); err != nil {
				t.Fatal(err)
			}
		}
		var msgs []Message
		for i := start; i < start+50; i++ {
			msgs = append(msgs, msg("orders", fmt.Sprintf("key-%d", i%7), i))
		}
		for i, r := range p.Produce(ctxFor(t, 30*time.Second), msgs...) {
			if r.Outcome == OutcomeAcked {
				acked[msgs[i].MsgID] = true
			}
		}
	}
	if err := c.Restart(killed); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, tp)
	log := assertReplicasIdentical(t, c, tp)
	seen := map[string]int{}
	lastByKey := map[string]int{}
	for _, r := range log {
		seen[r.MsgID]++
		n, _ := strconv.Atoi(strings.TrimPrefix(r.MsgID, "producer-"))
		if prev, ok := lastByKey[string(r.Key)]; ok && n <= prev {
			t.Errorf("key %s: message %d after %d: per-key order broken", r.Key, n, prev)
		}
		lastByKey[string(r.Key)] = n
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s is in the log %d times", id, n)
		}
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged %s is not in the log", id)
		}
	}
	if len(acked) < total*9/10 {
		t.Errorf("only %d of %d acknowledged; the producer should ride out one failover", len(acked), total)
	}
	t.Logf("%d acknowledged, %d in the log, leader %s killed at message %d", len(acked), len(log), killed, total/2)
}

// eventsOf collects events of one kind until cond says enough.
func truncationsOn(c *Cluster, node string) []Event {
	var out []Event
	for _, e := range c.Events(0) {
		if e.Kind == EventTruncation && e.Node == node {
			out = append(out, e)
		}
	}
	return out
}

// Acceptance 2: acks=1 loses writes the leader acknowledged when it is cut
// off before replicating them.
func TestAcksOneLosesWritesOnFailover(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	if err := c.TransferLeadership(ctxFor(t, 10*time.Second), tp, "n1"); err != nil {
		t.Fatal(err)
	}
	safe := mustProducer(t, c, ProducerConfig{ClientID: "safe", Acks: AcksAll})
	for i, r := range safe.Produce(ctxFor(t, 10*time.Second), msg("orders", "k", 0), msg("orders", "k", 1), msg("orders", "k", 2)) {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("baseline message %d: %v", i, r.Err)
		}
	}
	oldEpoch := partitionState(c.Snapshot(), tp).Epoch

	if err := c.Partition([]string{"n1"}, []string{"n2", "n3"}); err != nil {
		t.Fatal(err)
	}
	fast := mustProducer(t, c, ProducerConfig{ClientID: "fast", Acks: AcksLeader, BatchSize: 5})
	var lost []Message
	for i := 10; i < 15; i++ {
		lost = append(lost, msg("orders", "k", i))
	}
	res := fast.Produce(ctxFor(t, 10*time.Second), lost...)
	for i, r := range res {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("acks=1 write %d was not acknowledged by the isolated leader: %v %v", i, r.Outcome, r.Err)
		}
		if r.Epoch != oldEpoch || r.Offset != int64(3+i) {
			t.Fatalf("acks=1 write %d: offset %d epoch %d, want offset %d epoch %d", i, r.Offset, r.Epoch, 3+i, oldEpoch)
		}
	}
	waitFor(t, 10*time.Second, "n2 or n3 to lead", func() bool {
		l := c.Leader(tp)
		return l == "n2" || l == "n3"
	})
	c.Heal()
	waitConverged(t, c, tp)

	tr := truncationsOn(c, "n1")
	if len(tr) == 0 {
		t.Fatal("no truncation event from n1")
	}
	if tr[0].From != 3 || tr[0].To != 8 || len(tr[0].Epochs) != 1 || tr[0].Epochs[0] != oldEpoch {
		t.Errorf("truncation event: offsets %d–%d epochs %v; want 3–7 of epoch %d", tr[0].From, tr[0].To-1, tr[0].Epochs, oldEpoch)
	}
	log := assertReplicasIdentical(t, c, tp)
	for _, r := range log {
		for _, m := range lost {
			if r.MsgID == m.MsgID {
				t.Errorf("%s survived; acks=1 writes on a cut-off leader should be lost", m.MsgID)
			}
		}
	}
	if len(log) != 3 {
		t.Errorf("committed log has %d records, want the 3 acks=all ones", len(log))
	}
	t.Logf("acknowledged with acks=1 and lost: %d; %s", len(lost), tr[0].Text)
}

// Acceptance 3: the failover scene. Offsets committed under one epoch, a
// batch reaches only the leader, the leader dies, the epoch goes up by one,
// the producer's retry lands on the new leader, and the returning node
// truncates back to the committed point.
func TestFailoverScene(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	ctx := ctxFor(t, 30*time.Second)
	if err := c.TransferLeadership(ctx, tp, "n1"); err != nil {
		t.Fatal(err)
	}
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: true, BatchSize: 10})
	var first []Message
	for i := 0; i < 10; i++ {
		first = append(first, msg("orders", "881", i))
	}
	for _, r := range p.Produce(ctx, first...) {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("first batch: %v", r.Err)
		}
	}
	before := partitionState(c.Snapshot(), tp)
	epoch := before.Epoch
	if before.Leader != "n1" || replicaState(c.Snapshot(), tp, "n1").HighWatermark != 10 {
		t.Fatalf("step 1: want n1 leading with offsets 0–9 committed, got %+v", before)
	}

	// Step 2: the next batch reaches only the leader.
	if err := c.Partition([]string{"n1"}, []string{"n2", "n3"}); err != nil {
		t.Fatal(err)
	}
	var second []Message
	for i := 10; i < 15; i++ {
		second = append(second, msg("orders", "881", i))
	}
	var wg sync.WaitGroup
	var res []ProduceResult
	wg.Add(1)
	go func() {
		defer wg.Done()
		res = p.Produce(ctx, second...)
	}()
	waitFor(t, 5*time.Second, "n1 to hold offsets 10–14 uncommitted", func() bool {
		r := replicaState(c.Snapshot(), tp, "n1")
		return r.LogEnd == 15 && r.HighWatermark == 10
	})
	s := replicaState(c.Snapshot(), tp, "n1")
	last := s.Entries[len(s.Entries)-1]
	if last.Committed || last.Epoch != epoch || last.Offset != 14 {
		t.Errorf("step 2: n1's last entry %+v; want offset 14, epoch %d, uncommitted", last, epoch)
	}

	// Step 3: the leader dies; the others elect a leader one epoch up.
	if err := c.Kill("n1"); err != nil {
		t.Fatal(err)
	}
	c.Heal()
	waitFor(t, 10*time.Second, "a new leader", func() bool { return c.Leader(tp) != "" })
	after := partitionState(c.Snapshot(), tp)
	// One election moves the epoch up by one. On a starved machine the two
	// survivors can both stand and split the vote, costing another term;
	// that is raft working, so only a missing rise fails the test.
	if after.Epoch <= epoch {
		t.Errorf("step 3: epoch %d → %d; want it to go up", epoch, after.Epoch)
	} else if after.Epoch != epoch+1 {
		t.Logf("step 3: epoch %d → %d: a split vote cost an extra term", epoch, after.Epoch)
	}

	// Step 4: the producer's retry lands on the new leader. On a starved
	// machine leadership can move once more before the retry lands: then
	// the retry's epoch is later still, never the old one.
	wg.Wait()
	retried := after.Epoch
	if len(res) > 0 && res[0].Epoch > retried {
		t.Logf("step 4: epoch %d → %d before the retry landed", retried, res[0].Epoch)
		retried = res[0].Epoch
	}
	for i, r := range res {
		if r.Outcome != OutcomeAcked || r.Offset != int64(10+i) || r.Epoch != retried {
			t.Errorf("step 4: retried message %d: %v offset %d epoch %d (err %v); want acknowledged at %d in epoch %d", i, r.Outcome, r.Offset, r.Epoch, r.Err, 10+i, retried)
		}
		if r.Attempts < 2 {
			t.Errorf("step 4: message %d took %d attempts; the first should have failed with the leader", i, r.Attempts)
		}
	}

	// Step 5: the old leader returns and cuts its tail back to what was committed.
	if err := c.Restart("n1"); err != nil {
		t.Fatal(err)
	}
	waitConverged(t, c, tp)
	tr := truncationsOn(c, "n1")
	if len(tr) != 1 || tr[0].From != 10 || tr[0].To != 15 || len(tr[0].Epochs) != 1 || tr[0].Epochs[0] != epoch {
		t.Errorf("step 5: truncations on n1 %+v; want one of offsets 10–14 in epoch %d", tr, epoch)
	}
	log := assertReplicasIdentical(t, c, tp)
	if len(log) != 15 {
		t.Fatalf("final log has %d records, want 15", len(log))
	}
	for i, r := range log {
		want := epoch
		if i >= 10 {
			want = retried
		}
		if r.Epoch != want || r.MsgID != fmt.Sprintf("producer-%d", i) {
			t.Errorf("offset %d: %s in epoch %d; want producer-%d in epoch %d", i, r.MsgID, r.Epoch, i, want)
		}
	}
}

// Acceptance 4: a lost reply makes the producer retry; the idempotent
// producer's retry is recognised, the plain one's is written again.
func TestLostReplyRetry(t *testing.T) {
	t.Parallel()
	for _, idem := range []bool{true, false} {
		t.Run(fmt.Sprintf("idempotent=%v", idem), func(t *testing.T) {
			c := newTestCluster(t, 3)
			tp := TopicPartition{"payments", 0}
			mustCreate(t, c, TopicConfig{Name: "payments", Partitions: 1})
			p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: idem})
			if err := c.DropNextReply("producer"); err != nil {
				t.Fatal(err)
			}
			r := p.Produce(ctxFor(t, 10*time.Second), msg("payments", "881", 1))[0]
			if r.Outcome != OutcomeAcked || r.Attempts != 2 {
				t.Fatalf("outcome %v after %d attempts (%v); want acknowledged on the second", r.Outcome, r.Attempts, r.Err)
			}
			log := readAll(t, c, tp)
			want := 2
			if idem {
				want = 1
				if !r.Duplicate || r.Offset != 0 {
					t.Errorf("retry answered offset %d duplicate=%v; want the original offset 0, duplicate", r.Offset, r.Duplicate)
				}
			}
			if len(log) != want {
				t.Errorf("log holds the message %d times, want %d", len(log), want)
			}
		})
	}
}

// Acceptance 6: killing and restarting every node in turn loses nothing
// committed; replicas that missed a lot catch up, by snapshot if needed.
func TestRollingRestartsLoseNothing(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 2})
	p := mustProducer(t, c, ProducerConfig{ClientID: "producer", Acks: AcksAll, Idempotent: true, BatchSize: 1})
	acked := map[string]bool{}
	next := 0
	produce := func(n int) {
		var msgs []Message
		for i := 0; i < n; i++ {
			msgs = append(msgs, msg("orders", fmt.Sprintf("k%d", next%5), next))
			next++
		}
		for i, r := range p.Produce(ctxFor(t, 30*time.Second), msgs...) {
			if r.Outcome == OutcomeAcked {
				acked[msgs[i].MsgID] = true
			}
		}
	}
	produce(100)
	for _, n := range c.Nodes() {
		if err := c.Kill(n); err != nil {
			t.Fatal(err)
		}
		produce(600) // enough for snapshots and compaction while n is away
		if err := c.Restart(n); err != nil {
			t.Fatal(err)
		}
		for part := 0; part < 2; part++ {
			waitConverged(t, c, TopicPartition{"orders", part})
		}
	}
	seen := map[string]int{}
	for part := 0; part < 2; part++ {
		for _, r := range assertReplicasIdentical(t, c, TopicPartition{"orders", part}) {
			seen[r.MsgID]++
		}
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged %s appears %d times", id, seen[id])
		}
	}
	if len(acked) != next {
		t.Errorf("%d of %d acknowledged; one node down at a time should not stop writes", len(acked), next)
	}
}

func TestTransferLeadership(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	for _, n := range []string{"n2", "n3", "n1"} {
		if err := c.TransferLeadership(ctxFor(t, 10*time.Second), tp, n); err != nil {
			t.Fatalf("elect %s: %v", n, err)
		}
		if got := c.Leader(tp); got != n {
			t.Fatalf("after elect %s the leader is %s", n, got)
		}
	}
	err := c.TransferLeadership(ctxFor(t, time.Second), TopicPartition{"orders", 4}, "n1")
	if !errors.Is(err, ErrUnknownPartition) {
		t.Errorf("elect on a missing partition: %v", err)
	}
}

// A leader whose barrier is refused tries again while it leads in the same
// term, rather than leading without ever serving; it stops once it no
// longer leads, or its replica stops.
func TestBarrierRefusedIsTriedAgain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		answers []error // the barrier's answers, one a try
		leadFor int     // how many tries it still leads for
		stop    bool
		want    bool
		tries   int
	}{
		{"passes at once", []error{nil}, 9, false, true, 1},
		{"refused twice, then passes", []error{raft.ErrLeadershipTransferInProgress, raft.ErrEnqueueTimeout, nil}, 9, false, true, 3},
		{"refused, and the term ends", []error{raft.ErrEnqueueTimeout, raft.ErrNotLeader}, 1, false, false, 2},
		{"raft shut down", []error{raft.ErrRaftShutdown}, 9, false, false, 1},
		{"the replica stops", []error{raft.ErrEnqueueTimeout, raft.ErrEnqueueTimeout}, 9, true, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			stop := make(chan struct{})
			if c.stop {
				close(stop)
			}
			var refused []error
			got := retryBarrier(func() error {
				tries++
				return c.answers[min(tries, len(c.answers))-1]
			}, func() bool { return tries <= c.leadFor }, stop, time.Millisecond, 4*time.Millisecond,
				func(err error) { refused = append(refused, err) })
			if got != c.want || tries != c.tries {
				t.Errorf("passed %v after %d tries (refusals %v); want %v after %d", got, tries, refused, c.want, c.tries)
			}
		})
	}
}

// A leader cut off from the others believes it leads until its lease runs
// out, while its successor commits past its high-water mark. A read past
// its log there must send the reader to another leader, not tell it the
// offset is out of range: a consumer would start again at the log start.
func TestDeposedLeaderDoesNotSendAReaderBack(t *testing.T) {
	t.Parallel()
	c := newTestCluster(t, 3)
	tp := TopicPartition{"orders", 0}
	mustCreate(t, c, TopicConfig{Name: "orders", Partitions: 1})
	p := mustProducer(t, c, ProducerConfig{ClientID: "p", Acks: AcksAll})
	for i, r := range p.Produce(ctxFor(t, 10*time.Second), msg("orders", "k", 0), msg("orders", "k", 1)) {
		if r.Outcome != OutcomeAcked {
			t.Fatalf("record %d: %v", i, r)
		}
	}
	lead, err := c.WaitForLeader(ctxFor(t, 10*time.Second), tp)
	if err != nil {
		t.Fatal(err)
	}
	rep := c.replicaOn(lead, tp.String())
	if _, err := rep.read(7, 10); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read past the log on the leading %s: %v; want ErrOffsetOutOfRange", lead, err)
	}
	if err := c.Isolate(lead); err != nil {
		t.Fatal(err)
	}
	if _, err := rep.read(7, 10); !errors.Is(err, ErrNotLeader) {
		t.Errorf("a read past the log on the cut-off %s: %v; want ErrNotLeader", lead, err)
	}
}
