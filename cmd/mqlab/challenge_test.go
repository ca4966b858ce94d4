package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
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
}
