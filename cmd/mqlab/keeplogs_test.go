package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/broker/partlog"
)

// runRoot runs mqlab with args and returns what it printed to standard
// output and to standard error.
func runRoot(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// run --headless names the lab's folder at the start; --keep-logs keeps
// it, with segment files log dump reads, and without it the folder is
// gone when the run ends.
func TestRunKeepLogs(t *testing.T) {
	lesson := filepath.Join("..", "..", "lessons", "testdata", "runner", "failing.md")
	keep := filepath.Join(t.TempDir(), "logs")
	_, stderr, _ := runRoot("run", lesson, "--headless", "--keep-logs", keep)
	if !strings.Contains(stderr, "the segment files are in "+keep+" and stay there") {
		t.Errorf("run --keep-logs said:\n%s", stderr)
	}
	seg := filepath.Join(keep, "n1", "orders-0", partlog.SegmentFileName(0, partlog.LogSuffix))
	out, _, err := runRoot("log", "dump", "--records", seg)
	if err != nil || !strings.Contains(out, "baseOffset: 0 lastOffset: 0 count: 1") || !strings.Contains(out, "crcValid: true") ||
		!strings.Contains(out, "key: 881") {
		t.Errorf("log dump of the kept %s: %v\n%s", seg, err, out)
	}

	_, stderr, _ = runRoot("run", lesson, "--headless")
	m := regexp.MustCompile(`the segment files are in (\S+) until the lab closes`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("run without --keep-logs does not name its folder:\n%s", stderr)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("the run's own folder %s is still there after it (%v)", m[1], err)
	}

	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", lesson, "--headless", "--keep-logs", file}, {"script", "-", "--keep-logs", file}} {
		if _, _, err := runRoot(args...); err == nil || !strings.Contains(err.Error(), "that is a file; name a folder") {
			t.Errorf("%v: %v; want an error saying it is a file", args, err)
		}
	}
}
