package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lessons"
)

func TestLessonsListsOneLessonALine(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	store, err := lessons.OpenStore("")
	if err != nil {
		t.Fatal(err)
	}
	fo, err := lessons.Find("failover")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Finish(fo, fo.ExpectationCount()); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := listLessons(&out, &errOut); err != nil {
		t.Fatal(err)
	}
	all, _ := lessons.Curriculum()
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != len(all) {
		t.Fatalf("%d lines for %d lessons:\n%s", len(lines), len(all), out.String())
	}
	for i, l := range lines {
		les := all[i]
		if f := strings.Fields(l); len(f) < 2 || f[0] != strconv.Itoa(i+1) || f[1] != les.ID || !strings.Contains(l, les.Title) {
			t.Errorf("line %q does not start with %d and %s and name %q", l, i+1, les.ID, les.Title)
		}
		done := strings.Contains(l, fmt.Sprintf("  done: 0/%d predicted, %d/%d held", len(fo.Predictions()), fo.ExpectationCount(), fo.ExpectationCount()))
		if done != (les.ID == "failover") || !done && !strings.HasSuffix(l, "not done") {
			t.Errorf("line %q: done or not is wrong", l)
		}
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
}

func TestLessonCheckReportsEveryProblem(t *testing.T) {
	var out bytes.Buffer
	broken := filepath.Join("..", "..", "lessons", "testdata", "broken", "04-unknown-command.md")
	good := filepath.Join("..", "..", "lessons", "curriculum", "11-durability.md")
	err := checkLessons(context.Background(), &out, []string{good, broken}, false, lessons.Options{})
	if err == nil || !strings.Contains(err.Error(), "1 of 2 lesson files have problems") {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{
		good + ": ok: durability, 6 steps",
		broken + `:11:1: unknown command "kil"; did you mean "kill"?`,
		broken + ":12:21: acks=2: want 0, 1 or all",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunHeadlessPlaysALessonFile(t *testing.T) {
	cmd := runCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{filepath.Join("..", "..", "lessons", "testdata", "runner", "failing.md"), "--headless"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "1 expectation(s) failed") {
		t.Fatalf("a failing expectation must fail the run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "✗ hwm(orders/0) == 2 (hwm(orders/0) is 1)") {
		t.Errorf("transcript:\n%s", out.String())
	}

	cmd = runCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"no-such-lesson", "--headless"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `no lesson "no-such-lesson"`) {
		t.Errorf("an unknown lesson: %v", err)
	}
}

// Without a terminal there is no screen to play on: run prints the
// transcript, as --headless does, and never opens the TUI.
func TestRunWithoutATerminalPrintsTheTranscript(t *testing.T) {
	played := false
	defer func(f func(*cobra.Command, *lessons.Lesson, labFlags) error) { playLessonTUI = f }(playLessonTUI)
	playLessonTUI = func(*cobra.Command, *lessons.Lesson, labFlags) error { played = true; return nil }

	cmd := runCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{filepath.Join("..", "..", "lessons", "testdata", "runner", "failing.md")})
	err := cmd.Execute()
	if played {
		t.Fatal("run opened the screen with no terminal")
	}
	if err == nil || !strings.Contains(out.String(), "✗ hwm(orders/0) == 2 (hwm(orders/0) is 1)") {
		t.Errorf("err %v, transcript:\n%s", err, out.String())
	}
}

// The shell completes a lesson's id; run takes a lesson's number too.
func TestRunCompletesAndNumbers(t *testing.T) {
	var out bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"__complete", "run", "fail"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); !strings.HasPrefix(first, "failover\t") {
		t.Errorf("completing run fail: %q", out.String())
	}
	les, err := lessons.Resolve("3")
	if err != nil || les.ID != "queues" {
		t.Errorf("lesson 3: %v, %v", les, err)
	}
}

// lesson check warns about a question its step's heading answers, and
// the warning alone does not fail the check.
func TestLessonCheckWarnsOfRecall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "recall.md")
	src := "---\nid: recall\ntitle: Recall\nconcepts: [dlq]\n---\n\n## Permanent failures go straight to the dead-letter queue\n\n" +
		"```lab\ncluster nodes=3\n```\n\n```predict\nThe gateway rejects a payment as invalid. How many times is it tried?\n" +
		"- [ ] 5 times, with backoff\n- [x] once: a permanent failure goes to the dead-letter queue\nwhy: it can never succeed.\n```\n\n" +
		"```expect\nlost == 0\n```\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := checkLessons(context.Background(), &out, []string{p}, false, lessons.Options{}); err != nil {
		t.Fatalf("err %v:\n%s", err, out.String())
	}
	if want := "warning: " + p + ":13: the right choice's own words stand on the page before the question"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "in the step's heading") {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
