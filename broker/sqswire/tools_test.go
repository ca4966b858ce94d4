package sqswire

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// needTool checks for an outside program a test runs. Under CI a missing
// one fails the test: CI installs it (.ci/run). Elsewhere the test is
// skipped, and says so.
func needTool(t *testing.T, path, install string, check ...string) string {
	t.Helper()
	_, err := os.Stat(path)
	if err == nil && len(check) > 0 {
		err = exec.Command(path, check...).Run()
	}
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not usable (%v), and CI must run this test: %s", path, err, install)
	}
	t.Skipf("skipped outside CI: %s is not usable (%v): %s", path, err, install)
	return ""
}

// toolLab is a three-node lab with queue orders led by n2, so that n1,
// the clients' endpoint, outlives the leader's kill.
func toolLab(t *testing.T, ctx context.Context) *lab {
	t.Helper()
	l := newLab(t, 3)
	if err := l.c.CreateQueue(ctx, broker.QueueConfig{Name: "orders", Visibility: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := l.c.TransferQueueLeadership(ctx, "orders", "n2"); err != nil {
		t.Fatal(err)
	}
	return l
}

// awsEnv keeps the clients away from any AWS configuration of the
// machine, with credentials that are never checked.
func awsEnv(t *testing.T) []string {
	return append(os.Environ(), "HOME="+t.TempDir(), "AWS_ACCESS_KEY_ID=mqlab", "AWS_SECRET_ACCESS_KEY=mqlab",
		"AWS_DEFAULT_REGION=us-east-1", "AWS_RETRY_MODE=standard", "AWS_MAX_ATTEMPTS=20", "AWS_PAGER=", "AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null")
}

const boto3Script = `
import json, sys, boto3
from botocore.config import Config
sqs = boto3.client("sqs", endpoint_url=sys.argv[1], config=Config(retries={"max_attempts": 20, "mode": "standard"}))
url = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
def send(i):
    r = sqs.send_message(QueueUrl=url, MessageBody="order %d" % i,
        MessageAttributes={"n": {"DataType": "Number", "StringValue": str(i)}})
for i in range(25):
    send(i)
print("half", flush=True)
sys.stdin.readline()
for i in range(25, 50):
    send(i)
seen = {}
while len(seen) < 50:
    r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
        AttributeNames=["ApproximateReceiveCount"], MessageAttributeNames=["All"])
    for m in r.get("Messages", []):
        assert m["MessageAttributes"]["n"]["StringValue"] == m["Body"].split()[1], m
        seen[m["Body"]] = m["Attributes"]["ApproximateReceiveCount"]
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
print(json.dumps(seen), flush=True)
`

// boto3 (botocore 1.29, the query protocol) sends across a kill of the
// queue's leader, then receives and deletes every message: its MD5 checks
// pass and nothing is lost.
func TestBoto3AcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	py := needTool(t, "/usr/bin/python3", "apt-get install python3-boto3", "-c", "import boto3")
	ctx := ctxFor(t, 120*time.Second)
	l := toolLab(t, ctx)
	cmd := exec.CommandContext(ctx, py, "-c", boto3Script, l.s.Endpoint("n1"))
	cmd.Env = awsEnv(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "half" {
		cmd.Wait()
		t.Fatalf("boto3 did not send its first half: %q\n%s", lines.Text(), stderr.String())
	}
	if err := l.c.Kill("n2"); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "go")
	if !lines.Scan() {
		cmd.Wait()
		t.Fatalf("boto3 ended early:\n%s", stderr.String())
	}
	seen := map[string]string{}
	if err := json.Unmarshal(lines.Bytes(), &seen); err != nil {
		t.Fatalf("boto3 said %q: %v", lines.Text(), err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("boto3: %v\n%s", err, stderr.String())
	}
	if len(seen) != 50 {
		t.Fatalf("boto3 received %d distinct messages; want 50", len(seen))
	}
	if q, _ := l.s.queueState("orders"); q.Counts.Depth() != 0 || q.Leader == "n2" {
		t.Fatalf("after boto3 deleted everything the queue holds %d, led by %q", q.Counts.Depth(), q.Leader)
	}
	l.obs.mu.Lock()
	defer l.obs.mu.Unlock()
	if len(l.obs.sent) < 50 || l.obs.sent[0].Client != "boto3" {
		t.Fatalf("the observer heard %d sends, the first from %q; want 50 from boto3", len(l.obs.sent), l.obs.sent[0].Client)
	}
}

// The AWS CLI 2.9 sends before and after the leader's kill, receives
// them all and deletes them in a batch.
func TestAWSCLIAcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	aws := needTool(t, "/usr/bin/aws", "apt-get install awscli", "--version")
	ctx := ctxFor(t, 120*time.Second)
	l := toolLab(t, ctx)
	env := awsEnv(t)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, aws, append([]string{"--endpoint-url", l.s.Endpoint("n1"), "--output", "json", "sqs"}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("aws sqs %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		return out
	}
	var q struct{ QueueUrl string }
	json.Unmarshal(run("get-queue-url", "--queue-name", "orders"), &q)
	for i := range 6 {
		if i == 3 {
			if err := l.c.Kill("n2"); err != nil {
				t.Fatal(err)
			}
		}
		run("send-message", "--queue-url", q.QueueUrl, "--message-body", fmt.Sprint("order ", i),
			"--message-attributes", fmt.Sprintf(`{"n":{"DataType":"Number","StringValue":"%d"}}`, i))
	}
	seen := map[string]bool{}
	var entries []string
	for len(seen) < 6 && ctx.Err() == nil {
		var got struct {
			Messages []struct{ Body, ReceiptHandle string }
		}
		json.Unmarshal(run("receive-message", "--queue-url", q.QueueUrl, "--max-number-of-messages", "10", "--wait-time-seconds", "1",
			"--message-attribute-names", "All"), &got)
		for _, m := range got.Messages {
			seen[m.Body] = true
			entries = append(entries, fmt.Sprintf(`{"Id":"e%d","ReceiptHandle":%q}`, len(entries), m.ReceiptHandle))
		}
	}
	if len(seen) != 6 {
		t.Fatalf("the CLI received %d distinct messages; want 6", len(seen))
	}
	var del struct{ Successful, Failed []struct{ Id string } }
	json.Unmarshal(run("delete-message-batch", "--queue-url", q.QueueUrl, "--entries", "["+strings.Join(entries, ",")+"]"), &del)
	if len(del.Successful) != len(entries) || len(del.Failed) != 0 {
		t.Fatalf("delete batch: %+v", del)
	}
	if st, _ := l.s.queueState("orders"); st.Counts.Depth() != 0 {
		t.Fatalf("after the CLI deleted everything the queue holds %d", st.Counts.Depth())
	}
}
