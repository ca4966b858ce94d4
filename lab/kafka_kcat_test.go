package lab

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
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

// kcatConsumer is a kcat consumer in a group, run in the background, and
// the records it printed.
type kcatConsumer struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{} // closed once it exited and its output is read
	exit   error         // how it exited, set before done closes
	exitAt time.Time
	asked  bool // stop asked it to end

	mu    sync.Mutex
	lines []string // "PARTITION OFFSET KEY VALUE"
}

// startKcat starts kcat consuming orders in group, with librdkafka's
// default client.id, committing every 100 ms; extra are more arguments.
func startKcat(t *testing.T, kcat, bootstrap, group string, extra ...string) *kcatConsumer {
	t.Helper()
	args := append([]string{"-C", "-b", bootstrap, "-G", group, "-q", "-f", "%p %o %k %s\n",
		"-d", "cgrp,fetch,broker", "-u", "-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=100",
		"-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500", "-X", "fetch.wait.max.ms=100",
		"-X", "reconnect.backoff.ms=20", "-X", "reconnect.backoff.max.ms=200"}, extra...)
	args = append(args, "orders")
	k := &kcatConsumer{cmd: exec.Command(kcat, args...), done: make(chan struct{})}
	k.cmd.Stderr = &k.stderr
	out, err := k.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.cmd.Start(); err != nil {
		t.Fatalf("start kcat: %v", err)
	}
	go func() {
		defer close(k.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			k.mu.Lock()
			k.lines = append(k.lines, sc.Text())
			k.mu.Unlock()
		}
		k.exit, k.exitAt = k.cmd.Wait(), time.Now()
	}()
	t.Cleanup(func() {
		how, early := k.exited()
		k.stop(t)
		if t.Failed() {
			if early {
				t.Logf("kcat in group %s: %s", group, how)
			}
			// Its debug log (cgrp, fetch, broker): the last of it.
			lines := strings.Split(k.stderr.String(), "\n")
			t.Logf("kcat in group %s printed %d records and said, last:\n%s", group, k.count(), strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	return k
}

// printed is how many records it printed; a kcat that ended on its own
// fails the test at once, with how it ended.
func (k *kcatConsumer) printed(t *testing.T, name string) int {
	t.Helper()
	if how, ok := k.exited(); ok {
		t.Fatalf("%s printed %d records, then %s", name, k.count(), how)
	}
	return k.count()
}

func (k *kcatConsumer) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.lines)
}

// stop ends kcat as a person's Ctrl-C would (it commits and leaves its
// group) and waits for it.
func (k *kcatConsumer) stop(t *testing.T) {
	select {
	case <-k.done:
		return
	default:
	}
	k.asked = true
	k.cmd.Process.Signal(syscall.SIGINT) //nolint:errcheck // it may have exited meanwhile
	select {
	case <-k.done:
	case <-time.After(10 * time.Second):
		k.cmd.Process.Kill() //nolint:errcheck
		<-k.done
	}
}

// exited says, once kcat ended without being asked to, how it ended.
func (k *kcatConsumer) exited() (string, bool) {
	select {
	case <-k.done:
	default:
		return "", false
	}
	if k.asked {
		return "", false
	}
	return fmt.Sprintf("kcat exited on its own at %s (%v)", k.exitAt.Format("15:04:05.000"), k.exit), true
}

// ownView checks what kcat printed: each record once, and each key's
// records in the order written.
func (k *kcatConsumer) ownView(t *testing.T, name string, n int) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := map[string]int{}
	last := map[string][2]int{}
	for _, line := range k.lines {
		f := strings.Fields(line)
		var at [2]int
		if len(f) != 4 {
			t.Fatalf("%s printed %q; want partition, offset, key and value", name, line)
		}
		if _, err := fmt.Sscanf(f[3], "order-%d-%d", &at[0], &at[1]); err != nil {
			t.Fatalf("%s printed %q: %v", name, line, err)
		}
		seen[line]++
		if prev, ok := last[f[2]]; ok && (at[0] < prev[0] || at[0] == prev[0] && at[1] < prev[1]) {
			t.Errorf("%s handed %s of %s after order-%d-%d", name, f[3], f[2], prev[0], prev[1])
		}
		last[f[2]] = at
	}
	if len(seen) != n || len(k.lines) != n {
		t.Errorf("%s printed %d lines, %d distinct; want each of %d records once", name, len(k.lines), len(seen), n)
	}
}

// A kcat group consuming across a leader kill, and a second group reading
// the topic from its start while the first still runs, both with
// librdkafka's default client.id: kcat itself sees each record once and
// in order, and so does the checker — no duplicate delivery and no order
// violation, what the clients fetched again listed by check why as
// re-fetches.
func TestKcatGroupsAcrossLeaderKill(t *testing.T) {
	kcat := needTool(t, "kcat", "apt-get install kcat")
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "kafka listen port=0")
	const keys, each = 10, 12
	// Idempotent, so that a produce retried on a busy machine writes its
	// records once and the log holds exactly what the kcats must print.
	produce := func(from int) {
		for k := range keys {
			mustRun(t, l, fmt.Sprintf(`produce orders key=user-%d value="order-%d-{n}" count=%d idempotent=true`, k, from, each))
		}
	}
	produce(1)
	bootstrap := l.Snapshot().Kafka.Bootstrap
	billing := startKcat(t, kcat, bootstrap, "billing")
	waitFor(t, 45*time.Second, "billing's kcat to print the first half", func() bool { return billing.printed(t, "billing's kcat") >= keys*each })
	audit := startKcat(t, kcat, bootstrap, "audit")
	waitFor(t, 45*time.Second, "audit's kcat to print the first half", func() bool { return audit.printed(t, "audit's kcat") >= keys*each })

	// The leader of orders/0 dies under both groups' fetches, and the
	// second half is written to its successor while both read. The kill
	// picks a leader that coordinates neither group: a coordinator's
	// failover is another test's. Leaders are looked up, not assumed: on
	// a busy machine an election may be under way.
	w, _ := l.world()
	leaderOf := func(tp broker.TopicPartition) string {
		var n string
		waitFor(t, 20*time.Second, "a leader of "+tp.String(), func() bool { n = w.cluster.Leader(tp); return n != "" })
		return n
	}
	coordinators := map[string]bool{}
	for _, g := range []string{"billing", "audit"} {
		coordinators[leaderOf(w.cluster.CoordinatorPartition(g))] = true
	}
	orders0 := broker.TopicPartition{Topic: "orders", Partition: 0}
	leader := leaderOf(orders0)
	if coordinators[leader] {
		for _, n := range w.cluster.Nodes() {
			if !coordinators[n] {
				mustRun(t, l, "elect "+n+" orders/0")
				leader = leaderOf(orders0)
				break
			}
		}
	}
	mustRun(t, l, "kill "+leader)
	produce(2)
	waitFor(t, 45*time.Second, "both groups' kcat to print every record", func() bool {
		return billing.printed(t, "billing's kcat") >= 2*keys*each && audit.printed(t, "audit's kcat") >= 2*keys*each
	})
	// Each kcat commits what it printed as it leaves; a second check
	// below then reads both groups' final commits.
	billing.stop(t)
	audit.stop(t)
	billing.ownView(t, "billing's kcat", 2*keys*each)
	audit.ownView(t, "audit's kcat", 2*keys*each)

	res := mustRun(t, l, "check why")
	said := strings.Join(res[0].Lines, "\n")
	rep := l.Snapshot().Report
	if rep == nil {
		t.Fatal("no report after check")
	}
	t.Logf("killed %s; check why said:\n%s", leader, said)
	if rep.OrderViolations != 0 || rep.DuplicateDeliveries != 0 || rep.Lost != 0 || rep.Confirmed != 2*keys*each {
		t.Fatalf("report %s; want %d confirmed, no order violation, no duplicate delivery, none lost", rep.Summary(), 2*keys*each)
	}
	if rep.Refetched > 0 && !strings.Contains(said, fmt.Sprintf("refetched %d, because:", rep.Refetched)) {
		t.Errorf("%d re-fetches, and check why did not list them:\n%s", rep.Refetched, said)
	}
	// Every record reached both groups. A fetch on a connection the
	// broker cannot tie to one group (the two kcats, both caught up,
	// connecting to the new leader at the same offset) counts in neither
	// and is named, with the shared client.id to change.
	ambiguous := 0
	for _, a := range rep.Ambiguous {
		if a.Client != "rdkafka" || !slices.Equal(a.Groups, []string{"audit", "billing"}) {
			t.Errorf("ambiguous fetches %+v; want rdkafka's, between audit and billing", a)
		}
		ambiguous += a.Records
		if !strings.Contains(said, a.Hint()) {
			t.Errorf("check did not give the hint %q", a.Hint())
		}
	}
	if rep.Fetched+2*ambiguous < 2*keys*each*2 {
		t.Errorf("fetched %d and %d ambiguous; want every record fetched by each group", rep.Fetched, ambiguous)
	}
}
