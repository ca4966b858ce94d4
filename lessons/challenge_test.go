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

// challengeSeeds are the schedules each solution runs under: a buggy
// program can pass one lucky schedule, not all of these.
var challengeSeeds = []uint64{1, 2, 3, 4, 5}

// Every challenge has a naive Go solution that must fail on every seed,
// naming what went wrong, and a good one that must pass on every seed.
func TestChallengeSolutions(t *testing.T) {
	if raceEnabled {
		t.Skip("the solutions are separate programs; the race pass has nothing to add")
	}
	for _, ch := range Challenges() {
		for _, sol := range []struct {
			name string
			pass bool
		}{{"naive", false}, {"good", true}} {
			bin := buildSolution(t, filepath.Join("challenges", ch.ID, sol.name+".go"))
			for _, seed := range challengeSeeds {
				t.Run(fmt.Sprintf("%s/%s/seed-%d", ch.ID, sol.name, seed), func(t *testing.T) {
					t.Parallel()
					playTurns <- struct{}{}
					defer func() { <-playTurns }()
					v, err := RunChallenge(ctxFor(t, 2*time.Minute), ch, ChallengeOptions{Command: []string{bin}, Seed: seed})
					if err != nil {
						t.Fatalf("%v\n%s", err, strings.Join(v.Timeline, "\n"))
					}
					if v.Passed != sol.pass {
						t.Fatalf("passed %v, want %v; %d kills; failures %+v\n%s", v.Passed, sol.pass, v.Kills, v.Failures, strings.Join(v.Timeline, "\n"))
					}
					if !sol.pass && (len(v.Failures) == 0 || len(v.Failures[0].Orders) == 0 || len(v.Failures[0].Around) == 0) {
						t.Errorf("a failure must name its orders and what happened around them: %+v", v.Failures)
					}
					t.Logf("seed %d: passed %v, %d kills, %v", seed, v.Passed, v.Kills, v.Took.Round(time.Millisecond))
				})
			}
		}
	}
}
