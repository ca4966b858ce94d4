package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/lessons/challenge"
	"github.com/mqlab/mqlab/tui"
	"github.com/mqlab/mqlab/tui/source"
)

// defaultSeeds is how many schedules a challenge runs without --seed:
// enough for a pass to count.
const defaultSeeds = challenge.PassSchedules

// challengeHelp is the challenge command's long help: what the learner's
// program gets, what it must print, and what the lab does to it.
const challengeHelp = `challenge with no arguments lists the challenges. With an id and, after --,
the command that runs your program, it starts a lab with the Kafka
protocol on every node and runs your program as the group's consumer. Its
environment names the cluster (MQLAB_BOOTSTRAP), the topic (MQLAB_TOPIC),
the group (MQLAB_GROUP), a client id (MQLAB_CLIENT_ID), the session
timeout to ask for (MQLAB_SESSION_MS) and how long each record's work
takes (MQLAB_WORK_MS); for a challenge with a database, the SQLite file
(MQLAB_DB), and with a dead-letter topic, its name (MQLAB_DEAD_LETTERS).
Your program prints "processed KEY" on standard output for each record
it finished, "failed KEY" for each attempt that failed, and nothing else
there (log to standard error).

The SQS challenge (sqs-once) runs your program as the workers of a work
queue instead: in place of the cluster, topic, group and session timeout,
its environment names the SQS endpoint (MQLAB_SQS_ENDPOINT), the queue
(MQLAB_QUEUE) and its visibility timeout in milliseconds
(MQLAB_VISIBILITY_MS).

The lab sends the records, kills your program (SIGKILL to its whole
process group) at the worst moments a seeded schedule picks and starts it
again, pauses it (SIGSTOP) and lets it go on, kills leaders under it, and
then grades what it reported and wrote. Each failure names the records
and what happened around them. It exits non-zero when a schedule fails.
Each challenge's page is lessons/challenge/ID/README.md.

Two limits end a run without a grade: your program has 15 s to connect
to the cluster (time for an interpreter and its client library to load),
and each schedule has 60 s in all, so a program that hangs is stopped
then. Either way the verdict shows the end of its standard error.

  mqlab challenge at-least-once -- python3 consumer.py
  mqlab challenge at-least-once --seed 3 -- ./consumer`

// challengeFlags are the challenge command's flags.
type challengeFlags struct {
	seed  uint64 // the one schedule to run, when given
	seeds int    // how many schedules to run otherwise
	watch bool
	keep  string // --keep-logs
}

// logDir is where schedule seed's lab keeps its segment files: a folder
// of its own under --keep-logs, "" for a temporary one.
func (f challengeFlags) logDir(seed uint64) string {
	if f.keep == "" {
		return ""
	}
	return filepath.Join(f.keep, fmt.Sprintf("seed-%d", seed))
}

func challengeCmd() *cobra.Command {
	var f challengeFlags
	cmd := &cobra.Command{
		Use:   "challenge [ID -- COMMAND [ARGS...]]",
		Short: "Run your own consumer, in any language, under real crashes, and have it graded",
		Long:  challengeHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			store, serr := lessons.OpenStore("")
			if len(args) == 0 {
				var passed map[string]lessons.ChallengeProgress
				if serr == nil {
					if p, err := store.Load(); err == nil {
						passed = p.Challenges
					}
				}
				listChallenges(out, passed)
				return nil
			}
			ch, command, err := challengeArgs(args, cmd.ArgsLenAtDash())
			if err != nil {
				return err
			}
			if f.keep, err = keepLogsDir(f.keep); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if f.watch {
				return watchChallenge(ctx, out, ch, challenge.Options{Command: command, Seed: f.seed, LogDir: f.logDir(f.seed)})
			}
			list := f.schedules(cmd.Flags().Changed("seed"))
			if err := runSchedules(ctx, out, ch, command, list, f); err != nil {
				return err
			}
			if serr == nil && len(list) >= defaultSeeds {
				// One lucky schedule is no pass: progress keeps a run of several.
				if err := store.PassChallenge(ch.ID, len(list)); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "progress not kept: %v\n", err)
				}
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&f.seed, "seed", 1, "run this one schedule only, to replay it")
	cmd.Flags().IntVar(&f.seeds, "seeds", defaultSeeds, "how many schedules to run without --seed")
	cmd.Flags().StringVar(&f.keep, "keep-logs", "", "keep each schedule's segment files, in a folder of its own under this one (DIR/seed-1, …); default: removed when each lab closes")
	cmd.Flags().BoolVar(&f.watch, "watch", false, "watch one schedule (--seed, 1 by default) on the lab's screen: your program's group, offsets and the kills, live")
	return cmd
}

// challengeArgs reads the challenge's id and, after --, the command that
// runs the learner's program; dash is where -- stood (-1 for nowhere).
func challengeArgs(args []string, dash int) (*challenge.Challenge, []string, error) {
	id := args[0]
	ch := challenge.Find(id)
	if ch == nil {
		return nil, nil, fmt.Errorf("no challenge %q; mqlab challenge lists them", id)
	}
	if dash < 0 || dash >= len(args) {
		return nil, nil, fmt.Errorf("give the command that runs your program after --, like mqlab challenge %s -- python3 consumer.py", id)
	}
	if dash != 1 {
		return nil, nil, fmt.Errorf("put the challenge's id alone before --, then your program's command: mqlab challenge %s -- %s", id, strings.Join(args[dash:], " "))
	}
	return ch, args[dash:], nil
}

// schedules are the seeds to run: the one --seed names, or the first
// --seeds of them.
func (f challengeFlags) schedules(seedGiven bool) []uint64 {
	if seedGiven {
		return []uint64{f.seed}
	}
	var list []uint64
	for s := range uint64(max(1, f.seeds)) {
		list = append(list, s+1)
	}
	return list
}

// runSchedules runs the learner's program under each schedule in turn and
// prints each verdict; an error says a schedule failed or could not grade
// the program, or that the run was stopped.
func runSchedules(ctx context.Context, out io.Writer, ch *challenge.Challenge, command []string, list []uint64, f challengeFlags) error {
	failed := 0
	for _, s := range list {
		v, err := challenge.Run(ctx, ch, challenge.Options{Command: command, Seed: s, LogDir: f.logDir(s)})
		if ctx.Err() != nil {
			return errors.New("stopped: the lab and your program are stopped")
		}
		if err != nil {
			fmt.Fprintf(out, "%s, seed %d: %v\n", ch.ID, s, err)
			return fmt.Errorf("%s: the program could not be graded", ch.ID)
		}
		writeVerdict(out, v)
		if !v.Passed {
			failed++
		}
	}
	switch {
	case failed > 0 && len(list) == 1:
		return fmt.Errorf("%s: the schedule failed", ch.ID)
	case failed > 0:
		return fmt.Errorf("%s: %d of %d schedules failed", ch.ID, failed, len(list))
	case len(list) < defaultSeeds:
		fmt.Fprintf(out, "%s: passed on %s; a pass counts on %d schedules, as mqlab challenge runs without --seed\n", ch.ID, counted(len(list), "schedule", "schedules"), defaultSeeds)
	default:
		fmt.Fprintf(out, "%s: passed on all %d schedules\n", ch.ID, len(list))
	}
	return nil
}

func listChallenges(out io.Writer, passed map[string]lessons.ChallengeProgress) {
	for _, c := range challenge.All() {
		done := ""
		if p, ok := passed[c.ID]; ok {
			done = fmt.Sprintf("  ✓ passed %s", p.PassedAt.Local().Format("2006-01-02"))
		}
		fmt.Fprintf(out, "%d  %-16s %s%s\n   %s\n", c.Level, c.ID, c.Title, done, c.Summary)
	}
	fmt.Fprintln(out, "\nRun one: mqlab challenge ID -- COMMAND (mqlab challenge --help says what your program gets and must print)")
}

// writeVerdict says how one schedule went, and for a failure, which orders
// and what happened around them.
func writeVerdict(out io.Writer, v challenge.Verdict) {
	how := "FAILED"
	if v.Passed {
		how = "passed"
	}
	fmt.Fprintf(out, "%s, seed %d: %s (%s, %.1f s)\n", v.Challenge, v.Seed, how, counted(v.Kills, "kill", "kills"), v.Took.Seconds())
	if v.Checker != "" {
		fmt.Fprintf(out, "  the checker: %s\n", v.Checker)
	}
	if v.Passed {
		return
	}
	var shown []string // the last timeline shown
	for _, f := range v.Failures {
		fmt.Fprintf(out, "  ✗ %s\n", f.What)
		switch {
		case len(f.Items) == 0:
		case strings.ContainsAny(strings.Join(f.Items, ""), " "):
			fmt.Fprintf(out, "    %s:\n", f.Kind)
			for _, it := range f.Items {
				fmt.Fprintf(out, "      %s\n", it)
			}
		default:
			fmt.Fprintf(out, "    %s: %s\n", f.Kind, strings.Join(f.Items, ", "))
		}
		switch {
		case len(f.Around) == 0 || len(f.Items) == 0:
		case slices.Equal(f.Around, shown):
			fmt.Fprintf(out, "    around %s: the timeline above\n", f.Items[0])
		default:
			fmt.Fprintf(out, "    around %s:\n", f.Items[0])
			for _, l := range f.Around {
				fmt.Fprintf(out, "      %s\n", l)
			}
			shown = f.Around
		}
	}
	fmt.Fprintf(out, "  replay this schedule with --seed %d\n", v.Seed)
}

// counted is "1 kill" for one, "3 kills" (or "0 kills") otherwise.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// watchScreen shows a challenge's lab until the learner leaves it.
var watchScreen = func(l *lab.Lab, opts tui.Options) error {
	return openScreen(source.NewLabSource(l), opts)
}

// watchOptions are the screen's for watching a challenge under seed: what
// the lab does to the program, and where to look.
func watchOptions(ch *challenge.Challenge, seed uint64) tui.Options {
	pauses, tabs := "", "the Groups tab shows your commits"
	if slices.Contains(ch.Faults, challenge.FaultEffectAhead) {
		pauses += ", loses its commits on the way"
	}
	if slices.Contains(ch.Faults, challenge.FaultPause) {
		pauses += ", pauses it"
	}
	if slices.Contains(ch.Faults, challenge.FaultBetweenWrites) {
		pauses += ", stops it right after the first commit that names an order"
	}
	if ch.Schema != "" {
		tabs += ", and the Services tab your database's tables as your program writes them"
	}
	if ch.Queue != "" {
		return tui.Options{
			Title: fmt.Sprintf("Challenge %s, seed %d", ch.ID, seed),
			About: fmt.Sprintf("Your program runs here as the workers of queue %s, through this lab's SQS listener. The lab stops it right after the first commit that names a job and kills it (SIGKILL), and kills the queue's leader, at the moments seed %d picks, and the timeline's notes say each; the Queues tab shows the messages in flight and their receive counts, and the Services tab your database's tables as your program writes them. Once the run is over, q leaves the screen and prints the verdict. Leaving earlier stops the run.",
				ch.Queue, seed),
			Commands: tui.LabCommands(),
		}
	}
	return tui.Options{
		Title: fmt.Sprintf("Challenge %s, seed %d", ch.ID, seed),
		About: fmt.Sprintf("Your program runs here as the consumer of group %s, through this lab's Kafka listener. The lab kills it (SIGKILL)%s, and kills leaders at the moments seed %d picks, and the timeline's notes say each; %s. Once the run is over, q leaves the screen and prints the verdict. Leaving earlier stops the run.",
			ch.Group, pauses, seed, tabs),
		Commands: tui.LabCommands(),
	}
}

// watchChallenge runs one schedule with the lab's screen on it, and prints
// the verdict once the learner leaves the screen. Leaving before the run
// ends stops it.
func watchChallenge(ctx context.Context, out io.Writer, ch *challenge.Challenge, opts challenge.Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	labs := make(chan *lab.Lab, 1)
	screenDone := make(chan struct{})
	over := make(chan struct{}) // the run has ended and waits for the screen
	opts.Watch = func(l *lab.Lab) func(challenge.Verdict, error) {
		labs <- l
		return func(v challenge.Verdict, err error) {
			close(over)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				l.Note(fmt.Sprintf("the run is over, not graded: %v; q leaves the screen", err))
			case v.Passed:
				l.Note(fmt.Sprintf("the run is over: passed, %s; q leaves the screen", counted(v.Kills, "kill", "kills")))
			default:
				l.Note(fmt.Sprintf("the run is over: FAILED, %s wrong; q leaves the screen and prints the verdict", counted(len(v.Failures), "thing", "things")))
			}
			<-screenDone
		}
	}
	type outcome struct {
		v   challenge.Verdict
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := challenge.Run(ctx, ch, opts)
		done <- outcome{v, err}
	}()
	var res outcome
	select {
	case l := <-labs:
		sopts := watchOptions(ch, opts.Seed)
		sopts.Over = func() bool {
			select {
			case <-over:
				return true
			default:
				return false
			}
		}
		screenErr := watchScreen(l, sopts)
		close(screenDone)
		if screenErr != nil {
			cancel()
			<-done
			return screenErr
		}
		select {
		case <-over:
			res = <-done
		default:
			// Left before the end: the run stops.
			cancel()
			<-done
			return errors.New("stopped: the screen was left before the run ended; the lab and your program are stopped")
		}
	case res = <-done:
	}
	if res.err != nil {
		if ctx.Err() != nil {
			return errors.New("stopped: the lab and your program are stopped")
		}
		fmt.Fprintf(out, "%s, seed %d: %v\n", ch.ID, opts.Seed, res.err)
		return fmt.Errorf("%s: the program could not be graded", ch.ID)
	}
	writeVerdict(out, res.v)
	if !res.v.Passed {
		return fmt.Errorf("%s: the schedule failed", ch.ID)
	}
	return nil
}
