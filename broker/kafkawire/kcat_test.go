package kafkawire

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// needTool finds an outside program a test runs. Under CI a missing one
// fails the test: CI installs it (.ci/run). Elsewhere the test is skipped,
// and says so.
func needTool(t *testing.T, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI must run this test: %s", name, install)
	}
	t.Skipf("skipped outside CI: %s is not installed (%s)", name, install)
	return ""
}

// kcat (librdkafka) with its idempotent producer writes keyed records
// while the partition's leader is killed, then reads them back in a
// consumer group: nothing is lost, and the log holds each record once.
func TestKcatAcrossLeaderKill(t *testing.T) {
	t.Parallel() // each on a cluster and listener of its own
	kcat := needTool(t, "kcat", "apt-get install kcat")
	l := newLab(t, 3, broker.TopicConfig{Name: "orders", Partitions: 2})
	const n = 300
	ctx := ctxFor(t, 90*time.Second)

	var killed string
	prod := exec.CommandContext(ctx, kcat, "-P", "-b", l.s.Bootstrap(), "-t", "orders", "-K:", "-z", "snappy",
		"-X", "enable.idempotence=true", "-X", "client.id=kcat-producer", "-X", "linger.ms=5")
	stdin, err := prod.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var perr bytes.Buffer
	prod.Stderr = &perr
	if err := prod.Start(); err != nil {
		t.Fatalf("start kcat: %v", err)
	}
	w := bufio.NewWriter(stdin)
	for i := range n {
		fmt.Fprintf(w, "user-%d:order-%d\n", i%11, i)
		if i%20 == 19 {
			w.Flush()
			// Let kcat send what it has, so the kill falls mid-stream.
			time.Sleep(5 * time.Millisecond)
		}
		if i == n/2 {
			w.Flush()
			tp := broker.TopicPartition{Topic: "orders", Partition: 0}
			leader := l.c.Leader(tp)
			killed = leader
			if err := l.c.Kill(leader); err != nil {
				t.Fatalf("kill %s: %v", leader, err)
			}
			t.Logf("killed %s, the leader of %s, after %d records", leader, tp, i)
		}
	}
	w.Flush()
	stdin.Close()
	if err := prod.Wait(); err != nil {
		t.Fatalf("kcat producer: %v\n%s", err, perr.String())
	}
	// The node comes back before the consumer starts: kcat's consumer gives
	// up at once when the first brokers it tries all refuse it.
	if err := l.c.Restart(killed); err != nil {
		t.Fatal(err)
	}

	cons := exec.CommandContext(ctx, kcat, "-C", "-b", l.s.Bootstrap(), "-G", "billing", "-X", "auto.offset.reset=earliest",
		"-X", "client.id=kcat-consumer", "-e", "-q", "-f", "%k %s %p %o\n", "orders")
	var cerr bytes.Buffer
	cons.Stderr = &cerr
	out, err := cons.Output()
	if err != nil {
		t.Fatalf("kcat consumer: %v\n%s", err, cerr.String())
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 {
			got[f[1]]++
		}
	}
	for i := range n {
		v := fmt.Sprintf("order-%d", i)
		switch got[v] {
		case 0:
			t.Errorf("%s was produced but never consumed", v)
		case 1:
		default:
			t.Errorf("%s is in the log %d times; the idempotent producer's retries should have been recognised", v, got[v])
		}
	}
	if t.Failed() {
		t.Logf("kcat producer said:\n%s\nconsumer said:\n%s", perr.String(), cerr.String())
	}
}
