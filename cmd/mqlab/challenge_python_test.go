//go:build python

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mqlab/mqlab/lessons/challenge"
)

// Every challenge's Python starter, which does the naive thing, must fail,
// and its good Python solution pass, on Debian's python3-kafka
// (python3-boto3 for the SQS challenge). The Go programs prove the verdict
// on every seed (TestChallengeGoSolutions); here each Python program plays
// the first, and a program that must fail for a named reason (the
// two-writes consumer) every seed, as its Go twin does. They take a while,
// so go test runs them only with the tag python (.ci/run does, after
// installing the clients). Under CI a missing client fails the test;
// elsewhere it skips, and says so.
func TestChallengePythonSolutions(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's packages serve the system Python
	for mod, pkg := range map[string]string{"kafka": "python3-kafka", "boto3": "python3-boto3"} {
		if err := exec.Command(python, "-c", "import "+mod).Run(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s cannot import %s (%v): install Debian's %s, as .ci/run does", python, mod, err, pkg)
			}
			t.Skipf("skipped outside CI: %s cannot import %s; apt-get install %s to run it", python, mod, pkg)
		}
	}
	for _, ch := range challenge.All() {
		dir := filepath.Join(challengesDir, ch.ID)
		runSolutionsOn(t, ch, challengeSeeds[:1], []solution{
			{"consumer.py", ready(python, filepath.Join(dir, "consumer.py")), false, ""},
			{"good.py", ready(python, filepath.Join(dir, "testdata", "good.py")), true, ""},
		})
		runSolutions(t, ch, badSolutions(ch, ".py", func(file string) func() ([]string, error) { return ready(python, file) }))
	}
}
