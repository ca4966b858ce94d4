package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestBenchQuickPrintsEveryLine runs the bench with a few messages and
// checks that the report has every figure, its target with met or not met,
// and the ratio line in its exact form; and that progress went to
// standard error.
func TestBenchQuickPrintsEveryLine(t *testing.T) {
	t.Parallel() // beside the challenges' runs, which mostly wait
	var out, errOut bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"bench", "--quick"})
	root.SetContext(ctxFor(t))
	if err := root.Execute(); err != nil {
		t.Fatalf("bench --quick: %v\n%s", err, errOut.String())
	}
	report := out.String()
	for _, line := range []string{
		`^machine: \d+ cores \(GOMAXPROCS \d+\), `,
		`^load average \(1/5/15 min\): .+ at the start, .+ at the end$`,
		`^raw raft: the same cluster shape, [\d,]+ entries a round of [\d,]+ bytes \(the broker's: [\d,]+\)$`,
		`^produce acks=0 +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^produce acks=1 +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^produce acks=all +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^raw raft\.Apply +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^ratio broker/raw-raft: \d+\.\d\d$`,
		`^ +target ≥ 0\.60: (met|not met) `,
		`^raw raft\.Apply \+ files +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^ratio broker/raw-raft-with-files: \d+\.\d\d `,
		`^consume +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^kgo produce acks=all +[\d,]+ msgs/s +[\d.]+ MB/s  kfake [\d,]+ msgs/s; lab/kfake \d+\.\d\d  target ≥ 0\.80: (met|not met)$`,
		`^kgo consume +[\d,]+ msgs/s +[\d.]+ MB/s  kfake [\d,]+ msgs/s; lab/kfake \d+\.\d\d  target ≥ 1\.00: (met|not met)$`,
		`^queue send\+receive\+ack +[\d,]+ msgs/s +[\d.]+ MB/s`,
		`^sqs send\+receive\+delete +[\d,]+ msgs/s +p50 send [\d.]+[µm]?s +8 workers, batches of 10; 300 messages +target ≥ 5,000 msgs/s: (met|not met)$`,
		`^sqs, echo +[\d,]+ msgs/s +p50 send [\d.]+[µm]?s +the same workers against an echo of the protocol$`,
		`^failover +min \d+\.\d\d / median \d+\.\d\d / max \d+\.\d\d ET over 3 kills +target median ≤ 3 ET: (met|not met)$`,
		`^failover, retry 5ms +min \d+\.\d\d / median \d+\.\d\d / max \d+\.\d\d ET over 3 kills +target median ≤ 3 ET: (met|not met)$`,
		`^peak (RSS|memory) +\d+ [MG]B \(.+\) with 20,000 retained 100-byte messages at RF 3 +target ≤ 100 MB: (met|not met)$`,
	} {
		if !regexp.MustCompile(`(?m)` + line).MatchString(report) {
			t.Errorf("the report has no line matching %s", line)
		}
	}
	if n := strings.Count(report, "ratio broker/raw-raft:"); n != 1 {
		t.Errorf("the report has %d ratio lines; want exactly 1", n)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
	for _, phase := range []string{"peak memory", "produce acks=all", "raw raft.Apply", "consume", "kafka: produce", "queue", "sqs", "failover: kill 3/3"} {
		if !strings.Contains(errOut.String(), phase) {
			t.Errorf("no progress for %q on standard error:\n%s", phase, errOut.String())
		}
	}
	if strings.Contains(report, "bench ") && strings.Contains(report, "round 1/1") {
		t.Errorf("progress went to standard output:\n%s", report)
	}
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--quick", "--long"}, "choose one"},
		{[]string{"bench", "--partitions=0"}, "want 1 to 64"},
		{[]string{"bench", "--partitions=65"}, "want 1 to 64"},
		{[]string{"bench", "extra"}, "unknown command"},
	} {
		var out, errOut bytes.Buffer
		root := rootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(tc.args)
		root.SetContext(ctxFor(t))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v; want one that says %q", tc.args, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed a report:\n%s", tc.args, out.String())
		}
	}
}
