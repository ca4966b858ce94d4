package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/broker/bench"
	"github.com/mqlab/mqlab/internal/parallel"
	"github.com/mqlab/mqlab/lab/checker"
)

func TestMain(m *testing.M) {
	// The bench's Kafka phase reads back in a child: this binary.
	bench.ServeConsumer()
	parallel.Raise(strconv.Itoa(runsAtOnce)) // the challenges' runs, which mostly wait
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
		// A raft future raft never answers after a kill keeps its reader
		// waiting; the broker no longer waits with it (see replica.await).
		goleak.IgnoreAnyFunction("github.com/mqlab/mqlab/broker.(*replica).await.func1"))
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// lastJSON decodes the last line of out as the checker's report.
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line %q is not JSON: %v", lines[len(lines)-1], err)
	}
	for _, f := range checker.Fields() {
		if _, ok := m[f]; !ok {
			t.Errorf("the report has no %q", f)
		}
	}
	return m
}

func writeScript(t *testing.T, src string) string {
	path := filepath.Join(t.TempDir(), "scene.mqlab")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScriptPrintsTimelineAndReport(t *testing.T) {
	var out bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"script", "--json", "../../lab/testdata/lost-reply-duplicates.mqlab"})
	root.SetContext(ctxFor(t))
	if err := root.Execute(); err != nil {
		t.Fatalf("script: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"▸ 7: drop next reply to producer", "the next reply to producer will be lost",
		"producer-1 payments key=881 → acknowledged at payments/0 offset 1", "✓ duplicate_writes == 1 (duplicate_writes is 1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript has no %q:\n%s", want, text)
		}
	}
	m := lastJSON(t, text)
	if m["duplicate_writes"] != 1.0 || m["confirmed"] != 2.0 || m["lost"] != 0.0 {
		t.Errorf("report %v", m)
	}
}

// A failed expect or a command that cannot run makes the exit non-zero and
// names the line; --json still ends with the report.
func TestScriptFailureNamesTheLine(t *testing.T) {
	path := writeScript(t, "topic create orders partitions=1\nproduce orders count=2\n\nexpect hwm(orders/0) == 3\nkill n7\nheal\n")
	var out bytes.Buffer
	err := runScript(ctxFor(t), nil, &out, path, scriptFlags{json: true, timing: "fast"})
	if err == nil || !strings.Contains(err.Error(), "lines 4, 5 failed") ||
		!strings.Contains(err.Error(), "line 4: expect hwm(orders/0) == 3: hwm(orders/0) is 2") ||
		!strings.Contains(err.Error(), `line 5: kill: unknown node "n7"`) {
		t.Errorf("error %v", err)
	}
	if strings.Contains(out.String(), "▸ 6: heal") {
		t.Error("the script went on after a command that could not run")
	}
	if m := lastJSON(t, out.String()); m["confirmed"] != 2.0 {
		t.Errorf("report %v", m)
	}
}

func TestScriptThatDoesNotParseRunsNothing(t *testing.T) {
	path := writeScript(t, "cluster nodes=3\nkil n1\nproduce orders acks=al\n")
	var out bytes.Buffer
	err := runScript(ctxFor(t), nil, &out, path, scriptFlags{json: true, timing: "fast"})
	want := []string{`line 2, col 1: unknown command "kil"; did you mean "kill"?`, `line 3, col 21: acks=al: want 0, 1 or all; did you mean "all"?`}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v; want %q", err, w)
		}
	}
	if strings.Contains(out.String(), "▸") {
		t.Errorf("a script that does not parse ran:\n%s", out.String())
	}
	// --json's last line says that nothing ran, not a report of nothing lost.
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line %q is not JSON: %v", lines[len(lines)-1], err)
	}
	if m["ran"] != false || !strings.Contains(fmt.Sprint(m["error"]), "does not parse") {
		t.Errorf("last line %v: want ran false and the parse error", m)
	}
	if _, ok := m["lost"]; ok {
		t.Errorf("a script that did not parse reports lost=%v", m["lost"])
	}
}

func TestScriptFromStdinWithRecord(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	var out bytes.Buffer
	in := strings.NewReader("topic create orders partitions=1\nproduce orders key=881\nkill leader(orders/0)\nwait leader(orders/0) != none\nhelp kill\n")
	if err := runScript(ctxFor(t), in, &out, "-", scriptFlags{record: rec, timing: "fast"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "kill NODE\n  stop a node as if its process died") {
		t.Errorf("help was not printed:\n%s", out.String())
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 10 || !strings.Contains(string(b), `"type":"snapshot"`) || !strings.Contains(string(b), `"kind":"command"`) {
		t.Errorf("recording of %d lines:\n%.2000s", len(lines), b)
	}
}
