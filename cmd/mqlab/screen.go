package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// sandboxSetup is what the sandbox runs when it opens, so the first
// screen has a topic to watch: three partitions with their leaders spread
// over the three nodes (elect is a no-op where the broker already put
// one), and a few committed messages in each log.
var sandboxSetup = []string{
	"topic create orders partitions=3",
	"elect n1 orders/0",
	"elect n2 orders/1",
	"elect n3 orders/2",
	"produce orders count=9 acks=all",
}

// isTerminal says whether w is a terminal a screen can be drawn on.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// openScreen runs the lab screen over a source until the learner quits:
// a replay comes through here; lessons and the sandbox through runApp.
func openScreen(src view.Source, opts tui.Options) error {
	return tui.Run(src, opts)
}

// runApp opens the lesson picker (or, with open, that lesson straight
// away) on a lab with classroom timing unless timing says otherwise.
// Progress is kept in the XDG state directory.
func runApp(stderr io.Writer, f labFlags, open *lessons.Lesson) error {
	timing := f.timing
	if timing == "" {
		timing = "classroom"
	}
	store, err := lessons.OpenStore("")
	if err != nil {
		fmt.Fprintf(stderr, "mqlab: your progress will not be kept: %v\n", err)
		store = nil
	}
	err = tui.RunApp(tui.AppOptions{Progress: store, Timing: timing, Open: open, Sandbox: sandboxSetup, Kafka: f.kafka.listen, SQS: f.sqs.listen, LogDir: f.keep})
	if f.keep != "" {
		sayLogDir(stderr, f.keep, true) // after the screen, where it can be read
	}
	return err
}

// playLesson is mqlab run on a terminal.
func playLesson(cmd *cobra.Command, les *lessons.Lesson, f labFlags) error {
	return runApp(cmd.ErrOrStderr(), f, les)
}

func replayCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay FILE.jsonl",
		Short: "Play a recording made with script --record, read-only",
		Long: `replay opens a recording made with 'mqlab script --record FILE.jsonl' in the
lab screen, read-only: it plays at the pace it was recorded; space pauses,
+ and - change the speed, [ and ] step back and forward through what has
played. Nothing in it can be changed, so it needs no live cluster.

When standard output is not a terminal, it prints the recorded timeline.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !isTerminal(cmd.OutOrStdout()) {
				return printRecording(cmd.OutOrStdout(), args[0])
			}
			return runReplay(args[0])
		},
	}
}

func runReplay(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	src, err := source.NewReplay(f)
	f.Close()
	if err != nil {
		return notARecording(path, err)
	}
	defer src.Close()
	return openScreen(src, tui.Options{
		Title:       filepath.Base(path),
		ReadOnly:    true,
		HistorySize: max(tui.DefaultHistory, src.Frames()+1),
		Commands:    tui.ClockCommands(),
	})
}

// printRecording prints a recording's timeline the way script does.
func printRecording(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rec, err := lab.ReadRecording(f)
	if err != nil {
		return notARecording(path, err)
	}
	t := &transcript{out: out, start: rec.Start}
	for _, e := range rec.Events {
		t.print(e)
	}
	return nil
}

// notARecording explains a file replay cannot read. A script of lab
// commands is the usual mix-up: it says how to run it, and how to record.
func notARecording(path string, err error) error {
	if src, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(src)) != "" {
		if _, perr := command.ParseScript(string(src)); perr == nil {
			return fmt.Errorf("%s is a script of lab commands, not a recording: run it with mqlab script %s "+
				"(with --record run.jsonl it also records one to replay)", path, path)
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// scene is the failover scene mqlab plays without a terminal.
//
//go:embed scene.mqlab
var scene string

// runHeadless is what mqlab does without a terminal: it plays the failover
// scene through the lab, as mqlab script would, after the scene's opening
// comment, so scripts and CI still get something useful.
func runHeadless(ctx context.Context, out io.Writer, timing, keep string) error {
	if timing == "" {
		timing = "fast"
	}
	for _, l := range strings.Split(scene, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		fmt.Fprintln(out, strings.TrimSpace(strings.TrimPrefix(l, "#")))
	}
	fmt.Fprintln(out)
	return playScript(ctx, out, "the failover scene", scene, scriptFlags{timing: timing, keep: keep})
}
