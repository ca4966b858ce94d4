package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q; want %q", n, got, want)
		}
	}
}

func TestBenchRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Kills: 1}, "want at least 2"},
		{Config{Partitions: broker.MaxPartitions + 1}, "want 1 to 64"},
	} {
		_, err := Run(context.Background(), tc.cfg)
		if !errors.Is(err, broker.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run(%+v): %v; want broker.ErrInvalid saying %q", tc.cfg, err, tc.want)
		}
	}
}

// The ratio is the median of the rounds' own ratios, each round's broker
// rate over that round's raw raft rate.
func TestBenchRatioIsMedianOfRounds(t *testing.T) {
	rate := func(msgs int) Rate { return Rate{Messages: msgs, Elapsed: time.Second} }
	r := &Report{
		AcksAll: []Rate{rate(100), rate(300), rate(50)},
		Raw:     []Rate{rate(200), rate(400), rate(500)},
	}
	med, lo, hi := r.Ratio()
	if med != 0.5 || lo != 0.1 || hi != 0.75 {
		t.Errorf("Ratio() = %v, %v, %v; want 0.5, 0.1, 0.75", med, lo, hi)
	}
}

func TestReadVmHWM(t *testing.T) {
	hwm, err := readVmHWM()
	if err != nil {
		t.Skipf("no VmHWM here: %v", err)
	}
	if hwm < 1<<20 {
		t.Errorf("VmHWM = %d bytes; a Go test binary's peak is at least a megabyte", hwm)
	}
}

// Where /proc/self/status is missing the memory figure falls back to the
// Go runtime's own count, sampled.
func TestSampleGoMemory(t *testing.T) {
	stop := sampleGoMemory()
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	peak := stop()
	if peak < int64(len(held)) {
		t.Errorf("sampled peak %d bytes while holding %d", peak, len(held))
	}
	_ = held[len(held)-1]
}

// An acks=0 phase stops waiting for what it sent once a leader has changed
// and holds nothing uncommitted: a deposed leader's fire-and-forget writes
// never come.
func TestBenchDrainNoticesLeaderChange(t *testing.T) {
	c := newTestCluster(t, 3)
	tp := broker.TopicPartition{Topic: benchTopic, Partition: 0}
	mustCreate(t, c, broker.TopicConfig{Name: benchTopic, Partitions: 1, RF: 3})
	p := mustProducer(t, c, broker.ProducerConfig{ClientID: "p", Acks: broker.AcksAll})
	for i := range 3 {
		if r := p.Produce(ctxFor(t, 10*time.Second), msg(benchTopic, "k", i))[0]; r.Outcome != broker.OutcomeAcked {
			t.Fatalf("produce: %v %v", r.Outcome, r.Err)
		}
	}
	terms := leaderTerms(c, 1)
	if sum, changed := drainedMessages(c, 1, terms); sum != 3 || changed {
		t.Fatalf("before any change: %d messages, changed %v; want 3, false", sum, changed)
	}
	lead, _ := c.WaitForLeader(ctxFor(t, 10*time.Second), tp)
	other := "n1"
	if lead == other {
		other = "n2"
	}
	if err := c.TransferLeadership(ctxFor(t, 20*time.Second), tp, other); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the new leader to have committed all it holds", func() bool {
		sum, changed := drainedMessages(c, 1, terms)
		return changed && sum == 3
	})
	waitFor(t, 20*time.Second, "every replica to hold the 3 messages", func() bool { return replicasAgree(c, 1) == 3 })
}

// The report holds the log-on-disk targets: peak memory is held to
// 100 MB with or without --files (the memory phase always writes
// segment files); and kgo's rates on the lab are set against kfake's.
func TestReportTargets(t *testing.T) {
	rate := func(msgs int) Rate { return Rate{Messages: msgs, Elapsed: time.Second} }
	r := &Report{
		Acks0: []Rate{rate(70)}, Acks1: []Rate{rate(70)}, AcksAll: []Rate{rate(70)}, Raw: []Rate{rate(100)},
		Kafka:    KafkaResult{Lab: KafkaSide{Produce: rate(300), Consume: rate(500)}, Kfake: KafkaSide{Produce: rate(400), Consume: rate(400)}},
		Failover: FailoverResult{ET: []float64{1, 2, 3}}, FailoverFastRetry: FailoverResult{ET: []float64{1, 2, 3}},
		Memory: MemoryResult{Retained: 1_000_000, PeakBytes: 190e6, FromKernel: true},
	}
	text := func(files bool) string {
		r.Config = Config{Files: files}.withDefaults()
		r.RawFiles = nil
		if files {
			r.RawFiles = []Rate{rate(80)}
		}
		var b strings.Builder
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct {
		files bool
		want  []string
	}{
		{true, []string{"target ≤ 100 MB: not met", "target ≥ 0.60: met", "lab/kfake 0.75  target ≥ 0.80: not met", "lab/kfake 1.25  target ≥ 1.00: met",
			"raw raft.Apply + files", "ratio broker/raw-raft-with-files: 0.88"}},
		{false, []string{"target ≤ 100 MB: not met"}},
	} {
		got := text(tc.files)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("files %v: the report does not say %q:\n%s", tc.files, w, got)
			}
		}
		if !tc.files && strings.Contains(got, "with-files") {
			t.Errorf("without files, the report has a line for raw raft writing files:\n%s", got)
		}
	}
}
