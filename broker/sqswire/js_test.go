package sqswire

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// jsInstall says how to get the JavaScript SDK v3 where the test finds it.
const jsInstall = "npm install --prefix DIR --no-audit --no-fund @aws-sdk/client-sqs@3.1178.0 and run with NODE_PATH=DIR/node_modules"

// needNodeSQS finds node and checks it can load @aws-sdk/client-sqs
// (from NODE_PATH). Under CI a missing one fails the test: CI installs it
// (.ci/run). Elsewhere the test is skipped, and says how to install.
func needNodeSQS(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		var out []byte
		out, err = exec.Command(node, "-e", `require("@aws-sdk/client-sqs")`).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, errorLine(string(out)))
		}
	}
	if err == nil {
		return node
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("node cannot load @aws-sdk/client-sqs (%v), and CI must run this test: %s", err, jsInstall)
	}
	t.Skipf("skipped outside CI: node cannot load @aws-sdk/client-sqs (%v): %s", err, jsInstall)
	return ""
}

// errorLine is the line of node's output that names the error.
func errorLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// The JavaScript SDK v3 (the JSON protocol) creates a queue, sends
// across a kill of the queue's leader, receives every message, extends
// its visibility, deletes it, and deletes the queue: every message sent
// and acknowledged is received, none lost.
func TestJavaScriptSDKAcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	node := needNodeSQS(t)
	ctx := ctxFor(t, 120*time.Second)
	l := newLab(t, 3)
	cmd := exec.CommandContext(ctx, node, "testdata/sdk-v3-worker.cjs", l.s.Endpoint("n1"))
	cmd.Env = awsEnv(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || (want != "" && lines.Text() != want) {
			cmd.Wait()
			t.Fatalf("the worker said %q; want %q\n%s", lines.Text(), want, stderr.String())
		}
	}
	expect("created")
	leader, err := l.c.WaitForQueueLeader(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	// The worker talks to a node that does not lead the queue, so the
	// kill is a failover it retries across, not the loss of its endpoint.
	endpoint := ""
	for _, n := range l.c.Nodes() {
		if n != leader && endpoint == "" {
			endpoint = n
		}
	}
	fmt.Fprintln(stdin, l.s.Endpoint(endpoint))
	expect("half")
	if leader = l.c.QueueLeader("orders"); leader == endpoint || leader == "" {
		t.Fatalf("the queue's leader is %q, and the worker talks to %s", leader, endpoint)
	}
	if err := l.c.Kill(leader); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "go")
	expect("")
	seen := map[string]string{}
	if err := json.Unmarshal(lines.Bytes(), &seen); err != nil {
		cmd.Wait()
		t.Fatalf("the worker said %q: %v\n%s", lines.Text(), err, stderr.String())
	}
	expect("QueueDoesNotExist")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	if len(seen) != 50 {
		t.Fatalf("the worker received %d distinct messages; want 50", len(seen))
	}
	if _, ok := l.s.queueState("orders"); ok {
		t.Fatal("the queue is still there after DeleteQueue")
	}
	l.obs.mu.Lock()
	defer l.obs.mu.Unlock()
	received := map[string]bool{}
	for _, r := range l.obs.received {
		received[r.MsgID] = true
	}
	acked := 0
	for _, s := range l.obs.sent {
		if s.Client != "js-worker" {
			t.Fatalf("a send from %q; want the worker named js-worker", s.Client)
		}
		if s.Fate == Acked {
			acked++
			if !received[s.MsgID] {
				t.Errorf("%s was acknowledged and never received: lost", s.MsgID)
			}
		}
	}
	if acked < 50 {
		t.Fatalf("%d sends acknowledged; want 50", acked)
	}
}
