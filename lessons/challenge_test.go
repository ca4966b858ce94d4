package lessons

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildSolution compiles one of a challenge's Go solutions (a file kept
// out of the module's packages by its build constraint) and returns the
// binary.
func buildSolution(t *testing.T, file string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(file), ".go"))
	cmd := exec.Command("go", "build", "-o", bin, file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", file, err, out)
	}
	return bin
}

// challengeTurns bounds the challenge runs at once. They have a pool of
// their own beside the curriculum's plays: both mostly wait, on lab time
// and on the programs' rebalances.
var challengeTurns = make(chan struct{}, 6)

// challengeSeeds are the schedules each solution runs under: a buggy
// program can pass one lucky schedule, not all of these.
var challengeSeeds = []uint64{1, 2, 3, 4, 5}

// solution is one program a challenge's test runs, and whether it must pass.
type solution struct {
	name    string
	command []string
	pass    bool
}

// Every challenge's Go starter, which does the naive thing, must fail on
// every seed, naming what went wrong; its good Go solution must pass on
// every seed.
func TestChallengeGoSolutions(t *testing.T) {
	if raceEnabled {
		t.Skip("the solutions are separate programs; the race pass has nothing to add")
	}
	t.Parallel() // its builds and runs overlap the curriculum's plays
	for _, ch := range Challenges() {
		dir := filepath.Join("challenges", ch.ID)
		runSolutions(t, ch, []solution{
			{"consumer.go", []string{buildSolution(t, filepath.Join(dir, "consumer.go"))}, false},
			{"good.go", []string{buildSolution(t, filepath.Join(dir, "testdata", "good.go"))}, true},
		})
	}
}

// runSolutions runs each solution on every seed, in parallel with the
// other plays of the package.
func runSolutions(t *testing.T, ch *Challenge, sols []solution) {
	for _, sol := range sols {
		for _, seed := range challengeSeeds {
			t.Run(fmt.Sprintf("%s/%s/seed-%d", ch.ID, sol.name, seed), func(t *testing.T) {
				t.Parallel()
				challengeTurns <- struct{}{}
				defer func() { <-challengeTurns }()
				v, err := RunChallenge(ctxFor(t, 2*time.Minute), ch, ChallengeOptions{Command: sol.command, Seed: seed})
				if err != nil {
					t.Fatalf("%v\n%s", err, strings.Join(v.Timeline, "\n"))
				}
				if v.Passed != sol.pass {
					t.Fatalf("passed %v, want %v; %d kills; failures %+v\n%s", v.Passed, sol.pass, v.Kills, v.Failures, strings.Join(v.Timeline, "\n"))
				}
				if !sol.pass && (len(v.Failures) == 0 || len(v.Failures[0].Items) == 0 || len(v.Failures[0].Around) == 0) {
					t.Errorf("a failure must name its orders and what happened around them: %+v", v.Failures)
				}
				t.Logf("seed %d: passed %v, %d kills, %v", seed, v.Passed, v.Kills, v.Took.Round(time.Millisecond))
			})
		}
	}
}

// The timeline around an order names what happened near it; an order lost
// before any was reported gets the first kill's.
func TestChallengeAround(t *testing.T) {
	r := &ChallengeRecord{Keys: []string{"order-1", "order-2", "order-3"}, Timeline: []entry{
		{100 * time.Millisecond, "run 1 of the program starts (pid 7)"},
		{300 * time.Millisecond, "the lab kills run 1 (SIGKILL to its process group): the group has committed 1 orders and the program has reported 0"},
		{2 * time.Second, "run 2 reports processed order-2"},
	}}
	if got := r.around("order-1"); len(got) != 2 || !strings.Contains(got[1], "the lab kills run 1") {
		t.Errorf("around order-1: %q", got)
	}
	if got := r.around("order-3"); len(got) != 1 || !strings.Contains(got[0], "processed order-2") {
		t.Errorf("around order-3: %q", got)
	}
}
