package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/bench"
)

// benchPresets are the run lengths of mqlab bench; "" is the default.
var benchPresets = map[string]bench.Config{
	"": {},
	// long: the same work a round (a longer produce phase would measure a
	// longer log, not the same thing more steadily), more rounds, and more
	// of everything else.
	"long": {Rounds: 21, ConsumeMessages: 1_000_000, KafkaMessages: 3_000_000, QueueMessages: 50_000, SQSMessages: 50_000, Kills: 100},
	// quick: a smoke run in seconds; its figures say little.
	"quick": {Batches: 50, RawBatches: 100, Rounds: 1, ConsumeMessages: 2_000, KafkaMessages: 2_000, QueueMessages: 200, SQSMessages: 300, Kills: 3, Retained: 20_000},
}

func benchCmd() *cobra.Command {
	var long, quick, files bool
	var partitions int
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the broker against its targets and print one report",
		Long: `bench starts clusters of 3 nodes (RF 3, fast timing) one after another and
measures, with 100-byte values:

  peak resident memory with 1,000,000 messages retained   target ≤ 100 MB
  produce throughput, acks 0, 1 and all, batches of 100
  bare raft.Apply with entries of the same size, same cluster shape
  the ratio broker/raw-raft (acks=all)                     target ≥ 0.60
  raft.Apply whose members write what they apply to files, and the
       ratio broker/raw-raft-with-files: what the broker adds to both
  consume: a group reading the log back, a commit every 100 records
  kgo (franz-go) against the Kafka listener and against kfake:
       produce acks=all, linger 1ms                 lab/kfake target ≥ 0.80
       consume from the start                       lab/kfake target ≥ 1.00
  queue: send + receive + ack, 8 consumers
  sqs: 8 workers, send + receive + delete in
       batches of 10 through the SQS listener     target ≥ 5,000 msgs/s
       and through an echo of the protocol (the HTTP and client part)
  failover: leader killed → next acknowledged write, 20 kills,
            in election timeouts                           target median ≤ 3

Every replica writes its segment files to a temporary folder, as a lab's
replicas do; --files=false keeps the logs in memory (the memory phase
writes its files either way), the broker the produce target was first
set against.

The report goes to standard output, progress to standard error. On two
cores the default run takes about a minute, two or three with other
work on the machine; --long takes several minutes and gives steadier
medians. Other work on the machine lowers every rate: the CPU
time per batch, printed too, moves less.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if long && quick {
				return fmt.Errorf("--long and --quick contradict each other: choose one")
			}
			if partitions < 1 || partitions > broker.MaxPartitions {
				return fmt.Errorf("--partitions=%d: want 1 to %d", partitions, broker.MaxPartitions)
			}
			preset := ""
			switch {
			case long:
				preset = "long"
			case quick:
				preset = "quick"
			}
			cfg := benchPresets[preset]
			cfg.Partitions = partitions
			cfg.Files = files
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			return runBench(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), cfg)
		},
	}
	cmd.Flags().BoolVar(&long, "long", false, "a longer run (a few minutes): 21 rounds, more messages, 100 kills a series")
	cmd.Flags().BoolVar(&quick, "quick", false, "a smoke run of a few seconds with a few messages; its figures mean little")
	cmd.Flags().BoolVar(&files, "files", true, "every cluster writes its segment files, as a lab does (to a temporary folder); --files=false keeps the logs in memory")
	cmd.Flags().IntVar(&partitions, "partitions", 1, "partitions of the produce topic, and raft groups on the raw-raft side")
	return cmd
}

// runBench runs the measurements, telling progress on errOut, and prints
// the report on out.
func runBench(ctx context.Context, out, errOut io.Writer, cfg bench.Config) error {
	start := time.Now()
	cfg.Progress = func(line string) {
		fmt.Fprintf(errOut, "bench %5.1fs  %s\n", time.Since(start).Seconds(), line)
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return rep.WriteText(out)
}
