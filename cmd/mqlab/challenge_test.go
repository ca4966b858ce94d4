package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/lessons/challenge"
	"github.com/mqlab/mqlab/tui"
)

// runChallenge runs mqlab challenge with args and returns what it printed
// and its error.
func runChallenge(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := challengeCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// With no arguments it lists the challenges; bad invocations say what
// would be right; a program that does not start is named, with the check
// to make, and nothing is graded.
func TestChallengeCommand(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, err := runChallenge(t)
	if err != nil || !strings.Contains(out, "1  at-least-once") || !strings.Contains(out, "mqlab challenge ID -- COMMAND") {
		t.Errorf("the list: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"no-such"}, `no challenge "no-such"; mqlab challenge lists them`},
		{[]string{"at-least-once"}, "give the command that runs your program after --"},
		{[]string{"at-least-once", "extra", "--", "prog"}, "put the challenge's id alone before --"},
	} {
		if _, err := runChallenge(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.args, err, c.want)
		}
	}
	out, err = runChallenge(t, "at-least-once", "--seed", "1", "--", "no-such-program-mqlab")
	if err == nil || !strings.Contains(out, `at-least-once, seed 1: the challenge could not grade the program: run 1 of the program does not start: "no-such-program-mqlab" is not a program on PATH`) {
		t.Errorf("a program that does not start: %v\n%s", err, out)
	}
	// --keep-logs keeps each schedule's lab in a folder of its own.
	keep := t.TempDir()
	if _, err := runChallenge(t, "at-least-once", "--seed", "2", "--keep-logs", keep, "--", "no-such-program-mqlab"); err == nil {
		t.Error("a program that does not start was graded")
	}
	if ents, err := os.ReadDir(filepath.Join(keep, "seed-2", "n1")); err != nil || len(ents) == 0 {
		t.Errorf("--keep-logs %s: seed 2's lab left %v (%v); want n1's partition folders", keep, ents, err)
	}
}

// The list marks a challenge passed.
func TestChallengeListMarksPassed(t *testing.T) {
	var out bytes.Buffer
	listChallenges(&out, map[string]lessons.ChallengeProgress{"at-least-once": {PassedAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local), Schedules: 3}})
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(first, "at-least-once") || !strings.Contains(first, "✓ passed 2026-12-02") {
		t.Errorf("the list's first line: %q", first)
	}
	if strings.Contains(out.String(), "effect-once") && strings.Count(out.String(), "✓ passed") != 1 {
		t.Errorf("only at-least-once was passed:\n%s", out.String())
	}
}

// A verdict lists items that are sentences one per line, and does not
// print the same timeline twice.
func TestWriteVerdict(t *testing.T) {
	around := []string{"  3.10s  the lab lets run 2 go on (SIGCONT)"}
	var out bytes.Buffer
	writeVerdict(&out, challenge.Verdict{Challenge: "in-order", Seed: 2, Kills: 1, Failures: []challenge.Failure{
		{What: "balances went back", Kind: "writes", Items: []string{"account-5 seq 3 after seq 4", "account-3 seq 5 after seq 8"}, Around: around},
		{What: "wrong at the end", Kind: "accounts", Items: []string{"account-3 ends at 8890"}, Around: around},
		{What: "never parked", Kind: "orders", Items: []string{"order-8", "order-19"}},
	}})
	got := out.String()
	for _, want := range []string{
		"in-order, seed 2: FAILED (1 kill, ",
		"    writes:\n      account-5 seq 3 after seq 4\n      account-3 seq 5 after seq 8\n",
		"    around account-5 seq 3 after seq 4:\n        3.10s  the lab lets run 2 go on (SIGCONT)\n",
		"    around account-3 ends at 8890: the timeline above\n",
		"    orders: order-8, order-19\n",
		"replay this schedule with --seed 2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, got)
		}
	}
}

// --watch shows the challenge's lab while the run goes on, says on it when
// the run is over, and prints the verdict once the screen is left; leaving
// before the end stops the run.
func TestChallengeWatch(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	bin := filepath.Join(t.TempDir(), "good")
	if out, err := exec.Command("go", "build", "-o", bin, "../../lessons/challenge/at-least-once/testdata/good.go").CombinedOutput(); err != nil {
		t.Fatalf("building the good solution: %v\n%s", err, out)
	}
	defer func(f func(*lab.Lab, tui.Options) error) { watchScreen = f }(watchScreen)

	var about string
	watchScreen = func(l *lab.Lab, opts tui.Options) error {
		about = opts.About
		if opts.Over == nil || opts.Over() {
			return errors.New("the screen cannot tell that the run is under way")
		}
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			for _, e := range l.Snapshot().Timeline {
				if e.Kind == lab.EventNote && strings.HasPrefix(e.Text, "the run is over: passed") {
					if !opts.Over() {
						return errors.New("the screen was told the run is over, but its header was not")
					}
					return nil
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		return errors.New("the screen never said the run was over")
	}
	out, err := runChallenge(t, "at-least-once", "--watch", "--", bin)
	if err != nil || !strings.Contains(out, "at-least-once, seed 1: passed") {
		t.Errorf("watching a good solution: %v\n%s", err, out)
	}
	if !strings.Contains(about, "group billing") || strings.Contains(about, "pauses it") {
		t.Errorf("the screen's words for at-least-once: %q", about)
	}

	watchScreen = func(*lab.Lab, tui.Options) error { return nil }
	out, err = runChallenge(t, "at-least-once", "--watch", "--", bin)
	if err == nil || !strings.Contains(err.Error(), "stopped: the screen was left before the run ended") || strings.Contains(out, "passed") {
		t.Errorf("leaving the screen at once: %v\n%s", err, out)
	}
}
