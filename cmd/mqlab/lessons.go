package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lessons"
)

// playLessonTUI plays a lesson on screen; tests replace it.
var playLessonTUI = playLesson

func lessonsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lessons",
		Short: "List the lessons, one a line: number, id, title, minutes, done or not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listLessons(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func listLessons(out, errOut io.Writer) error {
	all, err := lessons.Curriculum()
	if err != nil {
		return err
	}
	var progress lessons.Progress
	if store, err := lessons.OpenStore(""); err == nil {
		progress, err = store.Load()
		if err != nil {
			fmt.Fprintf(errOut, "progress: %v\n", err)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for i, l := range all {
		minutes := "-"
		if l.Minutes > 0 {
			minutes = fmt.Sprintf("%d min", l.Minutes)
		}
		done := "not done"
		if lp := progress.Lessons[l.ID]; lp != nil && lp.Finished {
			done = "done"
			if sc := lp.Score; sc != nil {
				done = fmt.Sprintf("done: %d/%d predicted, %d/%d held", sc.Right, sc.Predictions, sc.Held, sc.Expectations)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, l.ID, l.Title, minutes, done)
	}
	return tw.Flush()
}

func lessonCmd() *cobra.Command {
	lesson := &cobra.Command{
		Use:   "lesson",
		Short: "Work on lesson files",
	}
	var play bool
	var reading time.Duration
	var timing string
	check := &cobra.Command{
		Use:   "check FILE...",
		Short: "Validate lesson files and report every problem with its line",
		Long: `check parses each lesson file and validates it without running anything:
the front matter (id, title, concepts), every lab command and condition,
tasks (do: and wait:), predictions (choices and the one marked [x], or a
number: answer: 20 ± 4, answer: 1,600 ± 10% a second), the
topics and nodes commands name, and {{…}} placeholders. A value kept with
{{epoch(orders/0) as before}} can be shown again as {{before}} and compared
with in a condition: expect epoch(orders/0) > before, wait: hwm(orders/0)
>= before + 10. It reports every problem as FILE:LINE[:COL]: message and
exits non-zero if there is one.

It then warns of each prediction a learner could answer by recall rather
than by reasoning: the right choice's own words, or the number asked for,
already on the page before the question (the question itself, the
paragraph just before it, the step's heading, the lesson's summary, the
rest of the step, earlier steps and their reveals, the nearer weighing
more); a numeric answer that one sum, difference, product or quotient
of two numbers in the paragraph just before gives; and a question that
asks what another asked, numbers aside. A prediction that says recall:
REASON is meant to be recalled. Warnings do not make check fail.

With --play it then plays each lesson headless on a lab of its own and
reports what only playing shows: a prediction whose answer is already on
screen when it is asked (its expect block reads the same values then), an
expect block that held before anything in its step happened (unless it
says why with holds-before: REASON), a task whose goal held before the
learner was asked, and an expectation that did not hold.

With --reading DURATION (which implies --play) it plays each lesson as the
screen does, with the lab held still while a step is read, and waits that
much wall time at every question, task and step's end before it answers,
acts or moves on, as a person reading would. It then also reports a
question whose answer arrived on screen during that pause (an election
runs on raft's own timers while the lab clock waits), and a task whose
goal could no longer be met once it had been read. It plays at the
screen's classroom timing unless --timing says otherwise.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if reading < 0 {
				return fmt.Errorf("--reading %v: a reading pause cannot be negative; try --reading 20s", reading)
			}
			if timing == "" && reading > 0 {
				timing = "classroom" // the screen's
			}
			return checkLessons(cmd.Context(), cmd.OutOrStdout(), args, play || reading > 0, lessons.Options{Reading: reading, Timing: timing})
		},
	}
	check.Flags().BoolVar(&play, "play", false, "also play each lesson and report spoiled questions, expectations that held before their step, and tasks done before the learner acts")
	check.Flags().DurationVar(&reading, "reading", 0, "play as the screen does, pausing this long at every question, task and step's end (e.g. 20s)")
	check.Flags().StringVar(&timing, "timing", "", "raft timing preset to play at: fast (--play's default) or classroom (--reading's)")
	lesson.AddCommand(check)
	return lesson
}

func checkLessons(ctx context.Context, out io.Writer, paths []string, play bool, opts lessons.Options) error {
	bad := 0
	var parsed []*lessons.Lesson
	defer func() {
		for _, r := range lessons.FindRecall(parsed) {
			fmt.Fprintf(out, "warning: %v\n", r)
		}
	}()
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		les, err := lessons.Parse(p, src)
		if err != nil {
			var ps lessons.Problems
			if !errors.As(err, &ps) {
				return err
			}
			for _, pr := range ps {
				fmt.Fprintln(out, pr)
			}
			bad++
			continue
		}
		parsed = append(parsed, les)
		var cmds, predicts, expects int
		for _, s := range les.Steps {
			for _, b := range s.Blocks {
				cmds += len(b.Commands)
				if b.Task != nil {
					cmds += len(b.Task.Do) + len(b.Task.Wait)
				}
				if b.Predict != nil {
					predicts++
				}
				expects += len(b.Expects)
			}
		}
		fmt.Fprintf(out, "%s: ok: %s, %s, %s, %s, %s\n", p, les.ID, count(len(les.Steps), "step"),
			count(cmds, "command"), count(predicts, "prediction"), count(expects, "expectation"))
		if !play {
			continue
		}
		found, err := lessons.Audit(ctx, les, opts)
		for _, f := range found {
			fmt.Fprintf(out, "%s:%v\n", p, f)
		}
		if err != nil {
			fmt.Fprintf(out, "%s: playing it stopped: %v\n", p, err)
		}
		if err != nil || len(found) > 0 {
			bad++
		} else {
			pace := ""
			if opts.Reading > 0 {
				pace = fmt.Sprintf(" at reading pace (%v a pause, %s timing)", opts.Reading, opts.Timing)
			}
			fmt.Fprintf(out, "%s: played%s: no question answered before it is asked, no expectation held before its step, every expectation held\n", p, pace)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d lesson files have problems", bad, len(paths))
	}
	return nil
}

func runCmd() *cobra.Command {
	var headless bool
	var f labFlags
	cmd := &cobra.Command{
		Use:   "run LESSON|NUMBER|FILE.md",
		Short: "Play a lesson: an embedded one by id or number (see mqlab lessons) or your own file",
		Long: `run plays a lesson. With --headless it plays it unattended and prints a
transcript: the narrative, each command and what it did, every task done
for you, every prediction with its answer, and every expectation with the
value the lab showed and ✓ or ✗. It exits non-zero when an expectation
fails or a command cannot run.

When standard output is not a terminal, run prints the transcript as
--headless does.

Headless runs use fast timing unless --timing classroom; the TUI uses
classroom timing unless --timing fast.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeLessons,
		RunE: func(cmd *cobra.Command, args []string) error {
			les, err := lessons.Resolve(args[0])
			if err != nil {
				return err
			}
			if f.keep, err = keepLogsDir(f.keep); err != nil {
				return err
			}
			// Without a terminal there is no screen: print the transcript.
			if !headless && isTerminal(cmd.OutOrStdout()) {
				if playLessonTUI == nil {
					return errors.New("the lesson player on screen is not wired in yet; add --headless for a transcript")
				}
				if f.timing == "" {
					f.timing = "classroom"
				}
				return playLessonTUI(cmd, les, f)
			}
			if f.timing == "" {
				f.timing = "fast"
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			// The lab is made here, with its listeners and folder, so the
			// folder can be named before the transcript starts.
			l, err := lab.New(lab.Options{Timing: f.timing, Kafka: f.kafka.listen, SQS: f.sqs.listen, LogDir: f.keep})
			if err != nil {
				return err
			}
			defer l.Close()
			sayLogDir(cmd.ErrOrStderr(), l.LogDir(), f.keep != "")
			return lessons.PlayHeadless(ctx, les, cmd.OutOrStdout(), lessons.Options{Timing: f.timing, Lab: l})
		},
	}
	cmd.Flags().BoolVar(&headless, "headless", false, "print the lesson as a transcript instead of playing it on screen")
	cmd.Flags().StringVar(&f.timing, "timing", "", "raft timing preset: fast or classroom")
	addKafkaFlag(cmd.Flags(), &f.kafka)
	addSQSFlag(cmd.Flags(), &f.sqs)
	addKeepLogsFlag(cmd.Flags(), &f.keep)
	return cmd
}

// completeLessons completes run's argument with the lessons' ids, and
// file names for a lesson of one's own.
func completeLessons(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	all, err := lessons.Curriculum()
	if err != nil {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var ids []string
	for _, l := range all {
		if strings.HasPrefix(l.ID, prefix) {
			ids = append(ids, l.ID+"\t"+l.Title)
		}
	}
	return ids, cobra.ShellCompDirectiveDefault
}

// count writes "1 step" or "3 steps".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
