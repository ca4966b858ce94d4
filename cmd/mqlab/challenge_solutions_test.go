package main

// The proofs of the challenges (their pages, starters and solutions are
// under lessons/challenge): each naive starter fails on every seed tried,
// and each good solution passes. They live with the command, not with the
// curriculum, so that go test runs them beside the broker's tests rather
// than beside the lessons' timing-sensitive plays.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lessons/challenge"
)

// buildSolution returns a function that compiles one of a challenge's Go
// solutions (a file kept out of the module's packages by its build
// constraint) the first time it is called, and returns the binary: the
// first of its runs to start builds it, while other runs go on.
func buildSolution(t *testing.T, file string) func() ([]string, error) {
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(file), ".go"))
	return sync.OnceValues(func() ([]string, error) {
		if out, err := exec.Command("go", "build", "-o", bin, file).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", file, err, out)
		}
		return []string{bin}, nil
	})
}

// runsAtOnce bounds the challenge runs at once: they mostly wait, on the
// programs' rebalances and the lab's schedule.
const runsAtOnce = 8

var challengeTurns = make(chan struct{}, runsAtOnce)

// challengesDir holds the challenges' starters and solutions.
const challengesDir = "../../lessons/challenge"

// challengeSeeds are the schedules each solution runs under: a buggy
// program can pass one lucky schedule, not all of these.
var challengeSeeds = []uint64{1, 2, 3, 4, 5}

// solution is one program a challenge's test runs, and whether it must pass.
type solution struct {
	name    string
	command func() ([]string, error) // the command line, made ready on first use
	pass    bool
	// want, for a program that must fail, is words one of its failures
	// must say.
	want string
}

// mustFail are the programs beside a challenge's starter that must fail
// it: testdata/bad_NAME.EXT, each with the words its verdict must say.
var mustFail = map[string]string{
	"effect-once/testdata/bad_two_writes": "were not one transaction",
}

// badSolutions are the challenge's programs in ext that must fail, made
// ready with command.
func badSolutions(ch *challenge.Challenge, ext string, command func(file string) func() ([]string, error)) []solution {
	var out []solution
	for _, name := range slices.Sorted(maps.Keys(mustFail)) {
		if !strings.HasPrefix(name, ch.ID+"/") {
			continue
		}
		file := filepath.Join(challengesDir, name+ext)
		out = append(out, solution{filepath.Base(file), command(file), false, mustFail[name]})
	}
	return out
}

// ready is a command that needs no making.
func ready(command ...string) func() ([]string, error) {
	return func() ([]string, error) { return command, nil }
}

// Every challenge's Go starter, which does the naive thing, must fail on
// every seed, naming what went wrong; its good Go solution must pass on
// every seed.
func TestChallengeGoSolutions(t *testing.T) {
	t.Parallel() // beside the package's other slow test, the bench's
	for _, ch := range challenge.All() {
		dir := filepath.Join(challengesDir, ch.ID)
		build := func(file string) func() ([]string, error) { return buildSolution(t, file) }
		runSolutions(t, ch, append([]solution{
			{"consumer.go", build(filepath.Join(dir, "consumer.go")), false, ""},
			{"good.go", build(filepath.Join(dir, "testdata", "good.go")), true, ""},
		}, badSolutions(ch, ".go", build)...))
	}
}

// runSolutions runs each solution on every seed, in parallel with the
// other plays of the package.
func runSolutions(t *testing.T, ch *challenge.Challenge, sols []solution) {
	runSolutionsOn(t, ch, challengeSeeds, sols)
}

// runSolutionsOn runs each solution on each of seeds.
func runSolutionsOn(t *testing.T, ch *challenge.Challenge, seeds []uint64, sols []solution) {
	for _, sol := range sols {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/%s/seed-%d", ch.ID, sol.name, seed), func(t *testing.T) {
				t.Parallel()
				challengeTurns <- struct{}{}
				defer func() { <-challengeTurns }()
				command, err := sol.command()
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				v, err := challenge.Run(ctx, ch, challenge.Options{Command: command, Seed: seed})
				if errors.Is(err, challenge.ErrIdlePause) {
					// Not graded, as a learner would be told: run it again.
					t.Logf("not graded, run again: %v\n%s", err, strings.Join(v.Timeline, "\n"))
					v, err = challenge.Run(ctx, ch, challenge.Options{Command: command, Seed: seed})
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, strings.Join(v.Timeline, "\n"))
				}
				if v.Passed != sol.pass {
					t.Fatalf("passed %v, want %v; %d kills; failures %+v\n%s", v.Passed, sol.pass, v.Kills, v.Failures, strings.Join(v.Timeline, "\n"))
				}
				if !sol.pass && (len(v.Failures) == 0 || len(v.Failures[0].Items) == 0 || len(v.Failures[0].Around) == 0) {
					t.Errorf("a failure must name its orders and what happened around them: %+v", v.Failures)
				}
				if sol.want != "" && !slices.ContainsFunc(v.Failures, func(f challenge.Failure) bool { return strings.Contains(f.What, sol.want) }) {
					t.Errorf("no failure says %q: %+v", sol.want, v.Failures)
				}
				t.Logf("seed %d: passed %v, %d kills, %v", seed, v.Passed, v.Kills, v.Took.Round(time.Millisecond))
			})
		}
	}
}
