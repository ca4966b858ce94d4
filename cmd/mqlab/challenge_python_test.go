//go:build python

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mqlab/mqlab/lessons/challenge"
)

// Every challenge's Python starter, which does the naive thing, must fail
// on every seed, and its good Python solution pass, on Debian's
// python3-kafka. They take a minute, so go test runs them only with the
// tag python (.ci/run does, after installing the client). Under CI a
// missing client fails the test; elsewhere it skips, and says so.
func TestChallengePythonSolutions(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's packages serve the system Python
	if err := exec.Command(python, "-c", "import kafka").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s cannot import kafka (%v): install Debian's python3-kafka, as .ci/run does", python, err)
		}
		t.Skipf("skipped outside CI: %s cannot import kafka; apt-get install python3-kafka to run it", python)
	}
	for _, ch := range challenge.All() {
		dir := filepath.Join(challengesDir, ch.ID)
		runSolutions(t, ch, append([]solution{
			{"consumer.py", ready(python, filepath.Join(dir, "consumer.py")), false, ""},
			{"good.py", ready(python, filepath.Join(dir, "testdata", "good.py")), true, ""},
		}, badSolutions(ch, ".py", func(file string) func() ([]string, error) { return ready(python, file) })...))
	}
}
