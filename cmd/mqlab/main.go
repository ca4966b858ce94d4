// Command mqlab is an interactive lab for message queues and logs: a real
// replicated broker in one process that you can watch, break and repair.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/broker/bench"
)

func main() {
	bench.ServeConsumer() // mqlab bench's Kafka phase reads back in a child: this executable
	if err := rootCmd().Execute(); err != nil {
		var st exitStatus
		if errors.As(err, &st) {
			os.Exit(st.code)
		}
		os.Exit(1)
	}
}

// exitStatus is an error after which mqlab exits with code rather than 1,
// for a command whose help names its statuses.
type exitStatus struct {
	error
	code int
}

func (e exitStatus) Unwrap() error { return e.error }

func rootCmd() *cobra.Command {
	var f labFlags
	root := &cobra.Command{
		Use:   "mqlab",
		Short: "A lab for message queues and logs, with a real replicated broker inside",
		Long: `mqlab runs a small broker cluster inside one process — every partition its
own raft group — and lets you watch offsets, epochs and high-water marks move
while nodes die and come back.

In a terminal it opens the lessons: pick one and it plays on a live
cluster, or pick the sandbox, a free lab of three nodes and a topic orders
to kill, isolate and heal with single keys. When standard output is not a
terminal it prints a failover scene instead.`,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if isTerminal(cmd.OutOrStdout()) {
				var err error
				if f.keep, err = keepLogsDir(f.keep); err != nil {
					return err
				}
				return runApp(cmd.ErrOrStderr(), f, nil)
			}
			return runHeadless(cmd.Context(), cmd.OutOrStdout(), f.timing, f.keep)
		},
	}
	addKafkaFlag(root.Flags(), &f.kafka)
	addSQSFlag(root.Flags(), &f.sqs)
	addKeepLogsFlag(root.Flags(), &f.keep)
	root.Flags().StringVar(&f.timing, "timing", "", "raft timing preset: fast or classroom (default classroom on screen, fast when printing)")
	root.AddCommand(scriptCmd(), replayCmd())
	root.AddCommand(lessonsCmd())
	root.AddCommand(lessonCmd())
	root.AddCommand(runCmd())
	root.AddCommand(benchCmd())
	root.AddCommand(serveCmd())
	root.AddCommand(challengeCmd())
	root.AddCommand(logCmd())
	root.SetErr(os.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nrun 'mqlab --help' for the flags", err)
	})
	return root
}
