package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

type scriptFlags struct {
	json    bool
	record  string
	timing  string
	verbose bool
	keep    string // --keep-logs
	kafka   kafkaFlag
	sqs     sqsFlag
}

func scriptCmd() *cobra.Command {
	var f scriptFlags
	cmd := &cobra.Command{
		Use:   "script FILE|-",
		Short: "Run lab commands headless and print the timeline",
		Long: `script runs a file of lab commands (or standard input, with -) on a fresh
lab and prints the timeline as it goes: each command, what the broker
reported, what each produce ended in, every expect with ✓ or ✗.

It exits 0 when every command ran and every expect held, and otherwise
names the failing lines. 'mqlab script - <<<help' lists the commands.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			return runScript(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), args[0], f)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "end with the checker's report as one JSON object on the last line")
	cmd.Flags().StringVar(&f.record, "record", "", "write every event and snapshots to this JSONL file, for a replay")
	cmd.Flags().StringVar(&f.timing, "timing", "fast", "raft timing preset: fast or classroom")
	cmd.Flags().BoolVar(&f.verbose, "verbose", false, "also print every append and commit")
	addKeepLogsFlag(cmd.Flags(), &f.keep)
	addKafkaFlag(cmd.Flags(), &f.kafka)
	addSQSFlag(cmd.Flags(), &f.sqs)
	return cmd
}

func runScript(ctx context.Context, stdin io.Reader, out io.Writer, path string, f scriptFlags) error {
	src, err := readScript(stdin, path)
	if err != nil {
		return err
	}
	return playScript(ctx, out, path, src, f)
}

// playScript runs a script's source on a fresh lab and prints the
// timeline as it goes.
func playScript(ctx context.Context, out io.Writer, path, src string, f scriptFlags) (err error) {
	lines, err := command.ParseScript(src)
	if err != nil {
		err = fmt.Errorf("%s does not parse:\n%w", path, err)
		if f.json {
			// Nothing ran: the last line says so rather than look like a
			// clean report of nothing lost.
			b, _ := json.Marshal(map[string]any{"ran": false, "error": err.Error()})
			fmt.Fprintln(out, string(b))
		}
		return err
	}
	report := checker.Report{LostMessages: []checker.Missing{}, Unreadable: []string{}}
	if f.json {
		// The report is the last line whatever happens after the script parsed.
		defer func() {
			b, jerr := json.Marshal(report)
			if jerr == nil {
				fmt.Fprintln(out, string(b))
			}
		}()
	}
	keep, err := keepLogsDir(f.keep)
	if err != nil {
		return err
	}
	l, err := lab.New(lab.Options{Timing: f.timing, Kafka: f.kafka.listen, SQS: f.sqs.listen, LogDir: keep})
	if err != nil {
		return err
	}
	defer l.Close()
	sayLogDir(os.Stderr, l.LogDir(), keep != "")
	if f.record != "" {
		file, err := os.Create(f.record)
		if err != nil {
			return err
		}
		rec := lab.NewRecorder(l, file)
		defer func() {
			if rerr := errors.Join(rec.Close(), file.Close()); rerr != nil && err == nil {
				err = fmt.Errorf("record %s: %w", f.record, rerr)
			}
		}()
	}
	p := &transcript{out: out, sub: l.Subscribe(1 << 16), start: l.Clock().Now(), verbose: f.verbose}
	defer p.sub.Close()
	failed := l.RunScript(ctx, lines, func(_ command.Line, res lab.Result, _ error) {
		p.flush()
		switch res.Command.(type) {
		case command.Help, command.LogFiles, command.LogDump:
			for _, line := range res.Lines {
				fmt.Fprintln(out, line)
			}
		}
	})
	if f.json {
		rep, cerr := l.Check(ctx)
		report = rep
		p.flush()
		if cerr != nil {
			fmt.Fprintf(os.Stderr, "final check: %v\n", cerr)
		}
	}
	if d := p.sub.Dropped(); d > 0 {
		fmt.Fprintf(out, "(%d events were too many to print)\n", d)
	}
	return lab.ScriptError(failed)
}

func readScript(stdin io.Reader, path string) (string, error) {
	if path == "-" {
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// transcript prints timeline events as readable lines: lab time since the
// start, then the event; commands stand out with their line number.
type transcript struct {
	out     io.Writer
	sub     *lab.Subscription
	start   time.Time
	verbose bool
}

func (t *transcript) flush() {
	for {
		select {
		case e, ok := <-t.sub.C:
			if !ok {
				return
			}
			t.print(e)
		default:
			return
		}
	}
}

func (t *transcript) print(e lab.Event) {
	if e.Detail && !t.verbose {
		return
	}
	at := fmt.Sprintf("%8.3fs", e.Time.Sub(t.start).Seconds())
	switch e.Kind {
	case lab.EventCommand:
		prefix := "▸"
		if e.Line > 0 {
			prefix = fmt.Sprintf("▸ %d:", e.Line)
		}
		fmt.Fprintf(t.out, "%s %s %s\n", at, prefix, e.Text)
	case lab.EventError:
		fmt.Fprintf(t.out, "%s   error: %s\n", at, e.Text)
	default:
		fmt.Fprintf(t.out, "%s   %s\n", at, strings.TrimSpace(e.Text))
	}
}
