// Command mqlab is an interactive lab for message queues and logs: a real
// replicated broker in one process that you can watch, break and repair.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := rootCmd().Execute(); err != nil {
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	var timing string
	root := &cobra.Command{
		Use:   "mqlab",
		Short: "A lab for message queues and logs, with a real replicated broker inside",
		Long: `mqlab runs a small broker cluster inside one process — every partition its
own raft group — and lets you watch offsets, epochs and high-water marks move
while nodes die and come back.`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFailoverDemo(cmd.Context(), cmd.OutOrStdout(), timing)
		},
	}
	root.Flags().StringVar(&timing, "timing", "fast", "raft timing preset: fast or classroom")
	root.AddCommand(scriptCmd())
	root.SetErr(os.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nrun 'mqlab --help' for the flags", err)
	})
	return root
}
