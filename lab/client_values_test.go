package lab

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// labNumber reads a numeric lab value the way a lesson's placeholder does.
func labNumber(t testing.TB, l *Lab, value string) float64 {
	t.Helper()
	c, err := command.Parse("expect " + value + " == 0")
	if err != nil {
		t.Fatalf("%s: %v", value, err)
	}
	s, err := l.Value(ctxFor(t, 10*time.Second), c.(command.Expect).Cond.Left)
	if err != nil {
		t.Fatalf("%s: %v", value, err)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s is %q, not a number", value, s)
	}
	return f
}

// Thirty payments fail together against a gateway that is down. Without
// jitter every retry of one attempt is due at the same moment: the waves
// are as large as the backlog. Full jitter draws each delay from [0, d],
// and no window holds more than a fraction of them.
func TestWorkerRetriesComeInWavesWithoutJitter(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	const n = 30
	peaks := map[string]float64{}
	for _, jitter := range []string{"none", "full"} {
		l := newLab(t)
		mustRun(t, l, "queue create payments visibility=30s dlq=payments-dlq",
			"send payments count="+strconv.Itoa(n),
			"worker start pay-1 queue=payments rate=1000/s fail=transient:1 retry=backoff base=1s max-attempts=3 jitter="+jitter,
			"wait depth(payments-dlq) == "+strconv.Itoa(n)+" timeout=20s")
		rs := l.Snapshot().Retries
		if len(rs) != 2*n {
			t.Fatalf("jitter=%s: %d retries in the snapshot, want %d (two per payment)", jitter, len(rs), 2*n)
		}
		for i, r := range rs {
			if r.Client != "pay-1" || !strings.HasPrefix(r.Message, "producer-") || r.Attempt < 2 || r.Attempt > 3 {
				t.Fatalf("jitter=%s: retry %+v", jitter, r)
			}
			if i > 0 && r.Failed.Before(rs[i-1].Failed) {
				t.Errorf("jitter=%s: retry %d failed at %v, before the one listed ahead of it", jitter, i, r.Failed)
			}
			d := time.Second << (r.Attempt - 2) // the backoff of the attempt that failed
			switch {
			case jitter == "none" && r.Delay != d:
				t.Errorf("jitter=none: attempt %d waits %v, want exactly %v", r.Attempt, r.Delay, d)
			case r.Delay < 0 || r.Delay > d:
				t.Errorf("jitter=full: attempt %d waits %v, outside [0, %v]", r.Attempt, r.Delay, d)
			}
			// The queue held each nacked payment back for its delay: the
			// retry came back, and not before it was due.
			if r.Arrived.IsZero() || r.Arrived.Before(r.Due()) {
				t.Errorf("jitter=%s: retry %+v arrived at %v, due %v", jitter, r, r.Arrived, r.Due())
			}
		}
		if got := labNumber(t, l, "retries(payments)"); got != 2*n {
			t.Errorf("jitter=%s: retries(payments) = %v, want %d", jitter, got, 2*n)
		}
		if a, b := labNumber(t, l, "retry_peak(pay-1)"), labNumber(t, l, "retry_peak(payments)"); a != b {
			t.Errorf("jitter=%s: the worker's peak %v and its queue's %v differ; it is the queue's only worker", jitter, a, b)
		}
		peaks[jitter] = labNumber(t, l, "retry_peak(payments)")
	}
	t.Logf("the busiest 100 ms: %v retries without jitter, %v with full jitter", peaks["none"], peaks["full"])
	// At 1,000 a second of lab time the 30 first attempts fail within
	// 30 ms of lab time, however long the machine takes over them (the
	// worker's rate holds lab time while it is behind); a wave may still
	// straddle two windows, but not by two thirds.
	if peaks["none"] < 20 {
		t.Errorf("without jitter the busiest 100 ms held %v retries, want most of the %d payments", peaks["none"], n)
	}
	if peaks["full"] > 15 {
		t.Errorf("with full jitter the busiest 100 ms held %v retries, want them spread out", peaks["full"])
	}
}

// Which failures a worker retries. A permanent one goes to the DLQ on
// its first attempt, with no retry. With retry=none the worker nacks at
// once and the queue's max-receives decides: each nack before the last
// receive is an immediate retry; the last one dead-letters, and is none.
func TestWorkerRetriesByFailureKind(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create bad visibility=30s dlq=bad-dlq",
		"queue create flaky visibility=30s max-receives=3 dlq=flaky-dlq",
		"send bad count=4",
		"send flaky count=2",
		"worker start w-bad queue=bad fail=permanent retry=backoff base=1s max-attempts=5",
		"worker start w-flaky queue=flaky fail=transient:1 retry=none",
		"wait depth(bad-dlq) == 4",
		"wait depth(flaky-dlq) == 2",
		"expect retries(w-bad) == 0",
		"expect retries(bad) == 0",
		"expect delivered(bad) == 4",
		"expect retries(flaky) == 4",
		"expect delivered(flaky) == 6",
	)
	for _, r := range l.Snapshot().Retries {
		if r.Client != "w-flaky" || r.Delay != 0 || r.Attempt < 2 || r.Attempt > 3 {
			t.Errorf("retry %+v: want w-flaky's immediate attempts 2 and 3", r)
		}
	}
}

// A consumer retries a record in place: each pause is a retry of its
// group, counted for the consumer and the group alike.
func TestConsumerRetriesAreRecorded(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1",
		"produce orders count=2",
		"consumer start c1 group=billing topic=orders fail=transient:1 retry=immediate max-attempts=3",
		"wait lag(billing) == 0",
		"expect retries(c1) == 4",
		"expect retries(billing) == 4",
		"expect retry_peak(billing) == 4",
	)
	rs := l.Snapshot().Retries
	if len(rs) != 4 {
		t.Fatalf("%d retries, want 4", len(rs))
	}
	for _, r := range rs {
		if r.Client != "c1" || r.Delay != 0 || r.Attempt < 2 || r.Attempt > 3 || r.Failed.IsZero() {
			t.Errorf("retry %+v: want c1's immediate attempts 2 and 3", r)
		}
	}
}

func TestRetryValuesNameWhatTheyCount(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	_, err := l.Exec(ctxFor(t, 10*time.Second), "expect retries(payments) == 0")
	if err == nil || !strings.Contains(err.Error(), `no worker, consumer, queue or group named "payments"; there are none yet`) {
		t.Errorf("before anything exists: %v", err)
	}
	mustRun(t, l, "queue create payments", "worker start pay-1 queue=payments",
		"expect retries(payments) == 0", "expect retry_peak(pay-1) == 0")
	_, err = l.Exec(ctxFor(t, 10*time.Second), "expect retry_peak(paymnets) == 0")
	if err == nil || !strings.Contains(err.Error(), "there are pay-1, payments") || !strings.Contains(err.Error(), `did you mean "payments"?`) {
		t.Errorf("a typo: %v", err)
	}
}

// throughput(Q) counts the acks of the last second of lab time: one
// worker at 20 a second shows about 20, two about 40, an idle queue 0.
func TestThroughputCountsTheLastSecondsAcks(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "queue create receipts visibility=10s", "queue create idle", "send receipts count=200",
		"worker start w1 queue=receipts rate=20/s",
		"wait processed(receipts) >= 30")
	one := labNumber(t, l, "throughput(receipts)")
	mustRun(t, l, "worker start w2 queue=receipts rate=20/s", "wait processed(receipts) >= 80")
	two := labNumber(t, l, "throughput(receipts)")
	t.Logf("throughput: one worker %v/s, two workers %v/s", one, two)
	if one < 15 || one > 22 {
		t.Errorf("one worker at 20/s: throughput %v", one)
	}
	if two < 30 || two > 42 {
		t.Errorf("two workers at 20/s: throughput %v", two)
	}
	if idle := labNumber(t, l, "throughput(idle)"); idle != 0 {
		t.Errorf("an idle queue's throughput is %v", idle)
	}
	if _, err := l.Exec(ctxFor(t, 10*time.Second), "expect throughput(nope) == 0"); err == nil || !strings.Contains(err.Error(), `unknown queue "nope"`) {
		t.Errorf("an unknown queue: %v", err)
	}
}

// processed(CLIENT) counts one worker's or consumer's finished work, so a
// lesson can tell two workers sharing a queue from one doing it all.
func TestProcessedByOneClient(t *testing.T) {
	t.Parallel() // it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "queue create jobs", "send jobs count=6 as=shop",
		"worker start w1 queue=jobs", "wait processed(jobs) == 6",
		"worker start w2 queue=jobs",
		"topic create orders partitions=1", "produce orders count=3",
		"consumer start c1 group=billing topic=orders", "wait lag(billing) == 0")
	if n := labNumber(t, l, "processed(w1)"); n != 6 {
		t.Errorf("processed(w1) = %v; w1 alone worked the six jobs", n)
	}
	if n := labNumber(t, l, "processed(w2)"); n != 0 {
		t.Errorf("processed(w2) = %v; w2 started after the queue was empty", n)
	}
	if n := labNumber(t, l, "processed(c1)"); n != 3 {
		t.Errorf("processed(c1) = %v; the consumer read three records", n)
	}
	if _, err := l.Exec(ctxFor(t, 5*time.Second), "expect processed(nobody) == 0"); err == nil {
		t.Errorf("processed(nobody) read a number; no group, queue or client has that name")
	}
}
