package bench

// The broker measured against its targets. Run runs every measurement
// and returns one report; `mqlab bench` prints it, and the Go benchmarks
// (go test -bench) call the same phases one at a time, so a figure in the
// report and a benchmark's metric come from the same code.

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// The shape every measurement shares, and the targets the report checks.
const (
	// ValueBytes is the size of every message value.
	ValueBytes = 100
	// Batch is the number of messages in one produce request, and so
	// in one raft entry; the raw-raft side applies entries of the same size.
	Batch = 100
	// Nodes is the cluster size; every topic and queue has RF 3.
	Nodes = 3

	// TargetRatio: the broker's acks=all produce rate is at least this
	// share of bare raft.Apply on the same cluster shape.
	TargetRatio = 0.6
	// TargetFailoverET: from a killed leader to the next acknowledged
	// write takes at most this many election timeouts (median).
	TargetFailoverET = 3.0
	// TargetPeakRSS: peak resident memory with Config.Retained
	// messages retained at RF 3, in bytes (100 MB). The replicas write
	// their segment files, as a lab's do: the data lives in the files.
	TargetPeakRSS = 100e6
)

// Config sizes a run. Zero fields take the defaults, which finish in
// well under two minutes on two cores.
type Config struct {
	// Partitions of the produce topic, and raft groups on the raw-raft
	// side (default 1).
	Partitions int
	// Batches is the produce requests each produce phase times (default
	// 3000, so 300,000 messages).
	Batches int
	// RawBatches is the raft.Apply calls the raw-raft phase times (default
	// max(Batches, 20000)): raw raft runs several times faster than the
	// broker, and a phase of a few tens of milliseconds would be mostly
	// noise. Its state does not grow, so a longer run measures the same
	// steady state.
	RawBatches int
	// Rounds is how often the produce phases and the raw-raft phase run,
	// one after the other; the report shows the median (default 5).
	Rounds int
	// ConsumeMessages is how many messages a consumer group reads back
	// (default 300,000).
	ConsumeMessages int
	// QueueMessages is how many messages go through a queue: sent,
	// received and acked (default 10,000).
	QueueMessages int
	// SQSMessages is how many messages the SQS workers send,
	// receive and delete through the SQS listener, and again through the
	// echo (default 20,000).
	SQSMessages int
	// KafkaMessages is how many records kgo produces and reads back, on
	// the lab and on kfake (default 1,000,000: about half a second of
	// producing on two cores; 100,000 lasted a few hundredths and
	// measured the client's and the cluster's warm-up as much as their
	// rate).
	KafkaMessages int
	// Kills is the number of leader kills in each failover series (default
	// 20).
	Kills int
	// Retained is the number of messages kept when peak memory is read
	// (default 1,000,000).
	Retained int
	// Progress, when set, hears what the run is doing, a line at a time.
	Progress func(line string)
	// Files makes every cluster write its partitions' segment files, as
	// a lab does, to a temporary folder removed at the end; its topics'
	// segments then roll at 1 MiB rather than at Kafka's 1 GiB.
	Files bool
}

func (cfg Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.Partitions, 1)
	def(&cfg.Batches, 3000)
	def(&cfg.RawBatches, max(cfg.Batches, 20000))
	def(&cfg.Rounds, 5)
	def(&cfg.ConsumeMessages, 300_000)
	def(&cfg.QueueMessages, 10_000)
	def(&cfg.SQSMessages, 20_000)
	def(&cfg.KafkaMessages, 1_000_000)
	def(&cfg.Kills, 20)
	def(&cfg.Retained, 1_000_000)
	return cfg
}

func (cfg Config) validate() error {
	if cfg.Partitions > broker.MaxPartitions {
		return fmt.Errorf("%w: bench: %d partitions; want 1 to %d", broker.ErrInvalid, cfg.Partitions, broker.MaxPartitions)
	}
	if cfg.Kills < 2 {
		return fmt.Errorf("%w: bench: %d kills make no median; want at least 2", broker.ErrInvalid, cfg.Kills)
	}
	return nil
}

func (cfg Config) progress(format string, args ...any) {
	if cfg.Progress != nil {
		cfg.Progress(fmt.Sprintf(format, args...))
	}
}

// Report is everything one run measured.
type Report struct {
	Config     Config
	Timing     broker.Timing
	Cores      int // runtime.NumCPU
	GOMAXPROCS int

	// One rate per round.
	Acks0, Acks1, AcksAll, Raw []Rate
	// RawFiles is raw raft writing what it applies to files
	// (RawRaftFiles), with Files only.
	RawFiles []Rate
	// BrokerEntryBytes and RawEntryBytes are the sizes of one produce
	// entry in the broker's raft log and of one raw-raft entry.
	BrokerEntryBytes, RawEntryBytes int

	Consume  ConsumeResult
	Kafka    KafkaResult
	Queue    QueueResult
	SQS      SQSResult
	Failover FailoverResult // the producer's default retry backoff
	// FailoverFastRetry retries every 5 ms, so the client's backoff adds
	// little: what is left is the broker's part.
	FailoverFastRetry FailoverResult
	Memory            MemoryResult

	// LoadStart and LoadEnd are the system's load averages (1, 5 and 15
	// minutes) when the run started and ended, or "unknown".
	LoadStart, LoadEnd string

	Elapsed time.Duration
}

// Run measures the broker: peak memory with Config.Retained messages
// retained, produce throughput with acks 0, 1 and all next to bare
// raft.Apply, consume, queue send+receive+ack, and failover. Every phase
// starts its own cluster and closes it before the next, so one phase's
// state does not slow another. It stops at the first error or when ctx
// ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Files {
		dir, err := os.MkdirTemp("", "mqlab-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench: a folder for the segment files: %w", err)
		}
		filesRoot = dir
		defer func() {
			filesRoot = ""
			os.RemoveAll(dir)
		}()
	}
	start := time.Now()
	rep := &Report{Config: cfg, Timing: broker.FastTiming, Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadStart: LoadAverage()}
	fail := func(what string, err error) (*Report, error) {
		return nil, fmt.Errorf("bench: %s: %w", what, err)
	}

	// Memory first: the process has held nothing big yet, so its peak is
	// this phase's even where the peak cannot be reset.
	cfg.progress("peak memory: producing %s messages of %d bytes at RF %d", thousands(int64(cfg.Retained)), ValueBytes, Nodes)
	mem, err := Retained(ctx, cfg.Retained, cfg.Partitions)
	if err != nil {
		return fail("peak memory", err)
	}
	rep.Memory = mem
	cfg.progress("peak memory: %s (%s), loaded in %v", formatBytes(float64(mem.PeakBytes)), mem.Source(), mem.Load.Round(time.Millisecond))
	debug.FreeOSMemory()

	for round := 1; round <= cfg.Rounds; round++ {
		for _, acks := range []broker.Acks{broker.AcksNone, broker.AcksLeader, broker.AcksAll} {
			if err := ctx.Err(); err != nil {
				return fail("produce", err)
			}
			r, entry, err := Produce(ctx, ProduceBench{Acks: acks, Idempotent: acks == broker.AcksAll, Partitions: cfg.Partitions, Batches: cfg.Batches})
			if err != nil {
				return fail("produce acks="+acks.String(), err)
			}
			switch acks {
			case broker.AcksNone:
				rep.Acks0 = append(rep.Acks0, r)
			case broker.AcksLeader:
				rep.Acks1 = append(rep.Acks1, r)
			default:
				rep.AcksAll = append(rep.AcksAll, r)
				rep.BrokerEntryBytes = entry
			}
			cfg.progress("round %d/%d: produce acks=%s: %s msgs/s", round, cfg.Rounds, acks, thousands(int64(r.MsgsPerSec())))
		}
		entry := RawProduceEntry(true)
		r, err := RawRaft(ctx, cfg.Partitions, cfg.RawBatches, entry)
		if err != nil {
			return fail("raw raft", err)
		}
		rep.Raw = append(rep.Raw, r)
		rep.RawEntryBytes = len(entry)
		cfg.progress("round %d/%d: raw raft.Apply: %s msgs/s; ratio %.2f", round, cfg.Rounds, thousands(int64(r.MsgsPerSec())),
			rep.AcksAll[round-1].MsgsPerSec()/r.MsgsPerSec())
		if cfg.Files {
			dir, err := os.MkdirTemp(filesRoot, "raw-")
			if err == nil {
				r, err = RawRaftFiles(ctx, cfg.Partitions, cfg.RawBatches, entry, dir)
			}
			if err != nil {
				return fail("raw raft writing files", err)
			}
			rep.RawFiles = append(rep.RawFiles, r)
			cfg.progress("round %d/%d: raw raft.Apply writing files: %s msgs/s; ratio %.2f", round, cfg.Rounds, thousands(int64(r.MsgsPerSec())),
				rep.AcksAll[round-1].MsgsPerSec()/r.MsgsPerSec())
		}
	}

	cfg.progress("consume: a group of %d reading %s messages back", consumeMembers, thousands(int64(cfg.ConsumeMessages)))
	if rep.Consume, err = Consume(ctx, consumePartitions, consumeMembers, cfg.ConsumeMessages); err != nil {
		return fail("consume", err)
	}
	cfg.progress("consume: %s msgs/s", thousands(int64(rep.Consume.Rate.MsgsPerSec())))

	cfg.progress("kafka: kgo producing and reading back %s records, on kfake and on the lab", thousands(int64(cfg.KafkaMessages)))
	if rep.Kafka, err = Kafka(ctx, cfg.KafkaMessages); err != nil {
		return fail("kafka", err)
	}
	cfg.progress("kafka: produce %.2f of kfake's rate, consume %.2f", rep.Kafka.ProduceRatio(), rep.Kafka.ConsumeRatio())

	cfg.progress("queue: %s messages sent, received and acked", thousands(int64(cfg.QueueMessages)))
	if rep.Queue, err = Queue(ctx, cfg.QueueMessages, true); err != nil {
		return fail("queue", err)
	}
	cfg.progress("queue: %s msgs/s", thousands(int64(rep.Queue.Rate.MsgsPerSec())))

	cfg.progress("sqs: %s messages sent, received and deleted by SQS workers, through the lab and through an echo", thousands(int64(cfg.SQSMessages)))
	if rep.SQS, err = SQS(ctx, cfg.SQSMessages); err != nil {
		return fail("sqs", err)
	}
	cfg.progress("sqs: %s msgs/s (echo %s msgs/s)", thousands(int64(rep.SQS.Lab.Rate.MsgsPerSec())), thousands(int64(rep.SQS.Echo.Rate.MsgsPerSec())))

	for _, fb := range []struct {
		into    *FailoverResult
		backoff time.Duration
		name    string
	}{
		{&rep.Failover, 0, "the producer's default backoff"},
		{&rep.FailoverFastRetry, fastRetry, "a retry every 5ms"},
	} {
		cfg.progress("failover: killing the leader %d times, %s", cfg.Kills, fb.name)
		each := func(i int, et float64) { cfg.progress("failover: kill %d/%d: %.2f ET", i+1, cfg.Kills, et) }
		if *fb.into, err = Failover(ctx, cfg.Kills, fb.backoff, each); err != nil {
			return fail("failover", err)
		}
	}
	rep.Elapsed = time.Since(start)
	rep.LoadEnd = LoadAverage()
	return rep, nil
}

// fastRetry is the failover series' fixed retry backoff: a twentieth of a
// fast election timeout.
const fastRetry = 5 * time.Millisecond

// The consume phase's shape: a member per partition.
const (
	consumePartitions = 3
	consumeMembers    = 3
)

// Ratio is the broker's acks=all rate over raw raft's, the median of the
// rounds (each round's two phases ran close together, under the same
// load), with the lowest and highest.
func (r *Report) Ratio() (median, lo, hi float64) {
	return ratioTo(r.AcksAll, r.Raw)
}

// FilesRatio is Ratio against raw raft writing files (RawFiles).
func (r *Report) FilesRatio() (median, lo, hi float64) {
	return ratioTo(r.AcksAll, r.RawFiles)
}

func ratioTo(broker, raw []Rate) (median, lo, hi float64) {
	var xs []float64
	for i := range min(len(broker), len(raw)) {
		xs = append(xs, broker[i].MsgsPerSec()/raw[i].MsgsPerSec())
	}
	if len(xs) == 0 {
		return 0, 0, 0
	}
	return medianOf(xs), slices.Min(xs), slices.Max(xs)
}

// CPURatio is raw raft's process CPU time per entry over the broker's per
// acks=all batch, the median of the rounds, or 0 where CPU time is unknown.
func (r *Report) CPURatio() float64 {
	var xs []float64
	for i := range min(len(r.AcksAll), len(r.Raw)) {
		if r.AcksAll[i].CPU <= 0 || r.Raw[i].CPU <= 0 {
			return 0
		}
		xs = append(xs, r.Raw[i].CPUPerBatch()/r.AcksAll[i].CPUPerBatch())
	}
	return medianOf(xs)
}

// WriteText prints the report: one figure a line, each target next to its
// figure with "met" or "not met", and the ratio line alone, in the form
// "ratio broker/raw-raft: 0.72".
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	cfg := r.Config
	p("mqlab bench: %d nodes, RF %d, %d-byte values, %s timing (election timeout %v)",
		Nodes, Nodes, ValueBytes, r.Timing.Name, r.Timing.ElectionTimeout)
	p("machine: %d cores (GOMAXPROCS %d), %s/%s, %s", r.Cores, r.GOMAXPROCS, runtime.GOOS, runtime.GOARCH, runtime.Version())
	p("load average (1/5/15 min): %s at the start, %s at the end", r.LoadStart, r.LoadEnd)
	if cfg.Files {
		p("every replica writes its partitions' segment files (.log, .index, .timeindex), as in a lab; segments roll at 1 MiB")
	} else {
		p("topics: segment.bytes 1 GiB, Kafka's default (a lab's topics roll every 16 records, for teaching)")
	}
	p("produce: %d producers, batches of %d messages (one raft entry each), %d partition%s, %s batches a round",
		benchWorkers, Batch, cfg.Partitions, pluralS(cfg.Partitions), thousands(int64(cfg.Batches)))
	p("raw raft: the same cluster shape, %s entries a round of %s bytes (the broker's: %s)",
		thousands(int64(cfg.RawBatches)), thousands(int64(r.RawEntryBytes)), thousands(int64(r.BrokerEntryBytes)))
	p("median of %d round%s [lowest–highest msgs/s]", cfg.Rounds, pluralS(cfg.Rounds))
	p("")
	rates := func(name string, rs []Rate, note string) {
		med, lo, hi := rateSpread(rs)
		cpu := ""
		if med.CPU > 0 {
			cpu = fmt.Sprintf("  %3.0f µs CPU/batch", med.CPUPerBatch())
		}
		p("%-24s %11s msgs/s %6.1f MB/s%s  [%s]%s", name, thousands(int64(med.MsgsPerSec())), med.MBPerSec(), cpu, rateRange(lo, hi), note)
	}
	rates("produce acks=0", r.Acks0, "  timed until committed")
	rates("produce acks=1", r.Acks1, "")
	rates("produce acks=all", r.AcksAll, "  idempotent")
	rates("raw raft.Apply", r.Raw, "")
	ratio, lo, hi := r.Ratio()
	p("ratio broker/raw-raft: %.2f", ratio)
	byCPU := ""
	if cpu := r.CPURatio(); cpu > 0 {
		byCPU = fmt.Sprintf("; by CPU time per batch %.2f", cpu)
	}
	p("%-24s target ≥ %.2f: %s  (rounds %.2f–%.2f%s)", "", TargetRatio, met(ratio >= TargetRatio), lo, hi, byCPU)
	if len(r.RawFiles) > 0 {
		rates("raw raft.Apply + files", r.RawFiles, "  new bytes each apply, written to files")
		ratio, lo, hi := r.FilesRatio()
		p("ratio broker/raw-raft-with-files: %.2f  (rounds %.2f–%.2f): what the broker adds to raft and the disk", ratio, lo, hi)
	}

	c := r.Consume
	p("%-24s %11s msgs/s %6.1f MB/s  a group of %d on %d partitions, a commit every %d; %s messages",
		"consume", thousands(int64(c.Rate.MsgsPerSec())), c.Rate.MBPerSec(), c.Members, c.Partitions, c.PollRecords, thousands(int64(c.Rate.Messages)))
	k := r.Kafka
	kafka := func(name string, lab, kf Rate, ratio, target float64) {
		p("%-24s %11s msgs/s %6.1f MB/s  kfake %s msgs/s; lab/kfake %.2f  target ≥ %.2f: %s",
			name, thousands(int64(lab.MsgsPerSec())), lab.MBPerSec(), thousands(int64(kf.MsgsPerSec())), ratio, target, met(ratio >= target))
	}
	kafka("kgo produce acks=all", k.Lab.Produce, k.Kfake.Produce, k.ProduceRatio(), TargetKafkaProduce)
	kafka("kgo consume", k.Lab.Consume, k.Kfake.Consume, k.ConsumeRatio(), TargetKafkaConsume)
	q := r.Queue
	p("%-24s %11s msgs/s %6.1f MB/s  %d senders, %d consumers; %s messages, p50 send→ack %v",
		"queue send+receive+ack", thousands(int64(q.Rate.MsgsPerSec())), q.Rate.MBPerSec(), queueBenchSenders, queueBenchConsumers,
		thousands(int64(q.Rate.Messages)), roundDuration(q.P50))
	sq := r.SQS
	p("%-24s %11s msgs/s  p50 send %-6v  %d workers, batches of %d; %s messages  target ≥ %s msgs/s: %s",
		"sqs send+receive+delete", thousands(int64(sq.Lab.Rate.MsgsPerSec())), roundDuration(sq.Lab.SendP50), SQSWorkers, SQSBatch,
		thousands(int64(sq.Lab.Rate.Messages)), thousands(TargetSQS), met(sq.Lab.Rate.MsgsPerSec() >= TargetSQS))
	p("%-24s %11s msgs/s  p50 send %-6v  the same workers against an echo of the protocol",
		"sqs, echo", thousands(int64(sq.Echo.Rate.MsgsPerSec())), roundDuration(sq.Echo.SendP50))
	failover := func(name string, f FailoverResult) {
		p("%-24s min %.2f / median %.2f / max %.2f ET over %d kills  target median ≤ %g ET: %s",
			name, f.Min(), f.Median(), f.Max(), len(f.ET), TargetFailoverET, met(f.Median() <= TargetFailoverET))
	}
	failover("failover", r.Failover)
	failover("failover, retry 5ms", r.FailoverFastRetry)
	m := r.Memory
	p("%-24s %s (%s) with %s retained %d-byte messages at RF %d  target ≤ %s: %s",
		m.Label(), formatBytes(float64(m.PeakBytes)), m.Source(), thousands(int64(m.Retained)), ValueBytes, Nodes,
		formatBytes(TargetPeakRSS), met(float64(m.PeakBytes) <= TargetPeakRSS))
	p("")
	p("failover: leader killed → next acknowledged acks=all write, in election timeouts; the first")
	p("  series keeps the producer's default retry backoff, the second retries every 5ms.")
	p("peak RSS: one process holds all three replicas, each writing its segment files (segments of")
	p("  1 MiB) to a temporary folder, with or without --files; every replica snapshots before the reading.")
	p("kgo: franz-go's client, %d-byte values, acks=all, linger %v, one partition; the lab has %d nodes", ValueBytes, KafkaLinger, Nodes)
	p("  at RF %d, kfake (franz-go's in-process Kafka) one broker at RF 1; consume reads them back from the start,", Nodes)
	p("  in a process of its own, %d times on each side: the median. The lab's topic has Kafka's default segment.bytes.", consumeReads)
	p("sqs: each worker sends a batch, receives up to %d and deletes them in a batch, in turn, through", SQSBatch)
	p("  one node's endpoint (the workers spread over the nodes); the echo answers without the broker,")
	p("  so its rate is what HTTP and the client alone allow. The workers speak SQS's JSON protocol")
	p("  with mqlab's own small client; go test -bench SQS ./broker/bench runs them on aws-sdk-go-v2 too.")
	p("MB/s counts value bytes (1 MB = 10^6 bytes). Other work on the machine lowers every rate;")
	p("  CPU time per batch moves less. Finished in %v.", r.Elapsed.Round(100*time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
}

// rateRange writes a range of rates briefly: "1.80–2.16 M" or "9–17 k".
func rateRange(lo, hi float64) string {
	if hi >= 1e6 {
		return fmt.Sprintf("%.2f–%.2f M", lo/1e6, hi/1e6)
	}
	return fmt.Sprintf("%.0f–%.0f k", lo/1e3, hi/1e3)
}

// roundDuration keeps two or three significant digits.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rateSpread returns the median round and the lowest and highest msgs/s.
func rateSpread(rs []Rate) (med Rate, lo, hi float64) {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b Rate) int {
		switch {
		case a.MsgsPerSec() < b.MsgsPerSec():
			return -1
		case a.MsgsPerSec() > b.MsgsPerSec():
			return 1
		}
		return 0
	})
	return sorted[(len(sorted)-1)/2], sorted[0].MsgsPerSec(), sorted[len(sorted)-1].MsgsPerSec()
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// LoadAverage reads the system's load averages over 1, 5 and 15 minutes
// from /proc/loadavg: how much other work shared the cores.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// thousands writes n with a comma every three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// formatBytes writes a size in MB or GB (10^6, 10^9 bytes).
func formatBytes(n float64) string {
	if n >= 1e9 {
		return strconv.FormatFloat(n/1e9, 'f', 2, 64) + " GB"
	}
	return strconv.FormatFloat(n/1e6, 'f', 0, 64) + " MB"
}

// filesRoot is where Run's clusters write their segment files when
// Config.Files asks for them ("" for none): Run sets it for its duration.
var filesRoot string

// KafkaSegmentBytes is Kafka's default segment.bytes, 1 GiB. The
// throughput phases give their topics this segment size, as a Kafka
// operator would leave it, instead of the lab's teaching default of 16
// records a segment, which rolls at every batch.
const KafkaSegmentBytes = 1 << 30

// segmentBytes is the segment size of the throughput phases' topics:
// Kafka's default in memory, 1 MiB when they write files, so that the
// segments close and their batches live in the files alone, as in a lab.
func segmentBytes() int64 {
	if filesRoot != "" {
		return 1 << 20
	}
	return KafkaSegmentBytes
}

// clusterConfig is the configuration every phase starts its cluster with.
func clusterConfig() broker.Config {
	cfg := broker.Config{Nodes: Nodes}
	if filesRoot != "" {
		if dir, err := os.MkdirTemp(filesRoot, "cluster-"); err == nil {
			cfg.DataDir = dir
		}
	}
	return cfg
}
