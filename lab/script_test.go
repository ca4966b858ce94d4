package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

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
	cases := []struct {
		file, from, to string
		wantLine       string // an expect that must fail
	}{
		// acks=all instead of acks=1: the write waits for a majority, lands on
		// the new leader, and nothing is lost.
		{"acks1-loses-on-failover.mqlab", `acks=1 as=fast`, `acks=all as=fast`, "expect lost >= 1"},
		// Without idempotence the retry after the lost reply is written twice.
		{"lost-reply-duplicates.mqlab", `for order 882" idempotent=true`, `for order 882"`, "expect duplicate_writes == 1"},
		// Without the crash between commit and publish the event is published.
		{"commit-then-publish-loses-the-event.mqlab", ` crash=after-commit`, ``, "expect hwm(orders/0) == 0"},
		// Without the outbox the crash after the commit loses the event.
		{"outbox-keeps-the-event.mqlab", `mode=outbox`, `mode=commit-then-publish`, "expect rows(orders.outbox, status='sent') == 1"},
		// A crash before the relay publishes makes no duplicate.
		{"outbox-relay-republishes.mqlab", `crash=before-mark`, `crash=after-commit`, "expect duplicate_writes == 1"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
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
				if !f.Expectation() {
					t.Errorf("line %d: not an expectation failure: %v", f.Line, f.Err)
				}
				found = found || strings.HasPrefix(strings.TrimSpace(f.Text), tc.wantLine)
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
