package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// scenesAtOnce is how many scripts the script tests play at a time, each
// on its own lab: a scene mostly waits on lab time and raft's timers. The
// race detector makes a scene CPU-bound, so under it they play two at a
// time, one a core, once the other packages of the race pass are done.
var scenesAtOnce = make(chan struct{}, scenesInParallel())

func scenesInParallel() int {
	if raceEnabled {
		return 2
	}
	return 4
}

// inParallel runs the rest of a subtest beside the other scenes, a few at
// a time.
func inParallel(t *testing.T) {
	t.Parallel()
	scenesAtOnce <- struct{}{}
	t.Cleanup(func() { <-scenesAtOnce })
}

func runScriptFile(t *testing.T, src string) []*LineError {
	t.Helper()
	lines, err := command.ParseScript(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	l := newLab(t)
	return l.RunScript(ctxFor(t, 2*time.Minute), lines, nil)
}

// Every script under testdata runs with every command and expect holding.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.mqlab")
	if err != nil || len(files) < 4 {
		t.Fatalf("scripts: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if raceEnabled && filepath.Base(f) == "flash-sale.mqlab" {
				// As TestFlashSaleBacklogRates: its backlogs are rates.
				t.Skip("the race detector slows the broker below the 10,000 orders a second of wall time this scene needs; the plain pass plays it")
			}
			if raceEnabled && filepath.Base(f) == "jitter-spreads-retries.mqlab" {
				// Its checks are retry rates per 100 ms; the same workers'
				// retries run under the detector in TestWorkerRetriesComeInWavesWithoutJitter.
				t.Skip("its checks are rates of retries in 100 ms windows, the longest scene; the plain pass plays it")
			}
			inParallel(t)
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if failed := runScriptFile(t, string(src)); len(failed) > 0 {
				t.Fatal(ScriptError(failed))
			}
			t.Logf("%s in %v", f, time.Since(start).Round(time.Millisecond))
		})
	}
}

// The scripts' expectations have teeth: the same scene with the behaviour
// changed fails at the line that checks it.
func TestScriptsFailWhenTheBehaviourChanges(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race TestScripts plays these scenes; the plain run plays every mutation")
	}
	cases := []struct {
		file, from, to string
		wantLine       string // an expect that must fail
		timesOut       bool   // wantLine is a wait that must time out instead
	}{
		// acks=all instead of acks=1: the write waits for a majority, lands on
		// the new leader, and nothing is lost.
		{"acks1-loses-on-failover.mqlab", `acks=1 as=fast`, `acks=all as=fast`, "expect lost >= 1", false},
		// Without idempotence the retry after the lost reply is written twice.
		{"lost-reply-duplicates.mqlab", `for order 882" idempotent=true`, `for order 882"`, "expect duplicate_writes == 1", false},
		// Without the crash between commit and publish the event is published.
		{"commit-then-publish-loses-the-event.mqlab", ` crash=after-commit`, ``, "expect hwm(orders/0) == 0", false},
		// Without the outbox the crash after the commit loses the event.
		{"outbox-keeps-the-event.mqlab", `mode=outbox`, `mode=commit-then-publish`, "expect rows(orders.outbox, status='sent') == 1", false},
		// A crash before the relay publishes makes no duplicate.
		{"outbox-relay-republishes.mqlab", `crash=before-mark`, `crash=after-commit`, "expect duplicate_writes == 1", false},
		// Committing after the work, the message the crash interrupted is
		// redelivered and processed: nothing is lost.
		{"at-most-once-loses-on-crash.mqlab", `ack=before crash=before-work`, `ack=after crash=before-work`, "expect processed(billing) == 2", false},
		// Committing before the work, the crash after it leaves nothing to redo.
		{"at-least-once-duplicates-on-crash.mqlab", `ack=after crash=after-work`, `ack=before crash=after-work`, "expect duplicate_deliveries >= 1", false},
		// With a dedupe table the redelivery credits nothing.
		{"wallet-none-credits-twice.mqlab", `strategy=none`, `strategy=dedupe-table`, "expect rows(wallet.wallets, balance=100) == 1", false},
		// Without one the redelivery credits ₹50 again.
		{"wallet-dedupe-table-credits-once.mqlab", `strategy=dedupe-table`, `strategy=none`, "expect rows(wallet.wallets, balance=50) == 1", false},
		// A group that starts at the latest offset skips what came before:
		// it is caught up at once, having received none of it.
		{"two-groups-each-receive-everything.mqlab", `from=earliest`, `from=latest`, "expect delivered(shipping) == 10", false},
		// A seek to offset 2 replays three messages, not five.
		{"seek-replays-without-duplicates.mqlab", `to=earliest`, `to=2`, "expect delivered(billing) == 10", false},
		// Acked before the work, the crash leaves nothing in flight to come back.
		{"worker-crash-comes-back-after-visibility.mqlab", `crash=after-work`, `ack=before crash=after-work`, "expect inflight(receipts) == 1", false},
		// With max-receives=5 the poison message is received five times
		// before the queue dead-letters it.
		{"poison-to-dlq-then-redrive.mqlab", `max-receives=3`, `max-receives=5`, "expect duplicate_deliveries == 2", false},
		// A rush of 800 orders a second grows the backlog by 400, not 600.
		{"flash-sale.mqlab", `rate=1000/s`, `rate=800/s`, "expect lag(billing) == 6000 ± 600", false},
		// A queue that holds ten rejects nothing.
		{"full-queue-rejects-sends.mqlab", `max-length=3`, `max-length=10`, "expect rejected == 2", false},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			inParallel(t)
			src, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), tc.from) {
				t.Fatalf("%s has no %q", tc.file, tc.from)
			}
			failed := runScriptFile(t, strings.Replace(string(src), tc.from, tc.to, 1))
			found := false
			for _, f := range failed {
				want := strings.HasPrefix(strings.TrimSpace(f.Text), tc.wantLine)
				timedOut := tc.timesOut && want && strings.Contains(f.Error(), "timed out")
				if !f.Expectation() && !timedOut {
					t.Errorf("line %d: not an expectation failure: %v", f.Line, f.Err)
				}
				found = found || want
			}
			if !found {
				t.Errorf("changed script: want %q to fail; failures: %v", tc.wantLine, ScriptError(failed))
			}
		})
	}
}

// A script stops at a command that cannot run, and goes on after an
// expect that does not hold; each failure names its line.
func TestScriptFailures(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	src := `cluster nodes=3
topic create orders partitions=1
expect hwm(orders/0) == 5
produce orders key=1
kill n9
produce orders key=2
`
	failed := runScriptFile(t, src)
	if len(failed) != 2 {
		t.Fatalf("want 2 failures, got %v", ScriptError(failed))
	}
	if failed[0].Line != 3 || !failed[0].Expectation() || !strings.Contains(failed[0].Error(), "line 3: expect hwm(orders/0) == 5: hwm(orders/0) is 0") {
		t.Errorf("first failure: %v", failed[0])
	}
	if failed[1].Line != 5 || failed[1].Expectation() || !strings.Contains(failed[1].Error(), `line 5: kill: unknown node "n9"; the nodes are n1, n2, n3`) {
		t.Errorf("second failure: %v", failed[1])
	}
	if err := ScriptError(failed); !strings.HasPrefix(err.Error(), "lines 3, 5 failed:") {
		t.Errorf("summary: %v", err)
	}
}
