package main

import (
	"bytes"
	"errors"
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

// log dump reads a damaged segment file to the damage and says what it
// found there, without a panic, then exits with status 2 naming the
// damage; a file that is no segment file is refused with status 1.
func TestLogDumpDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := partlog.New(partlog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"order 881 placed", "order 882 placed"} {
		if _, err := l.Append(partlog.Batch{Records: []partlog.Record{{Timestamp: 1e15, Key: []byte("k"), Value: []byte(v)}}}, 7); err != nil {
			t.Fatal(err)
		}
	}
	l.DetachDir()
	name := partlog.SegmentFileName(0, partlog.LogSuffix)
	good, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-3] ^= 0xff // in the second batch's value, under its CRC
	bad := t.TempDir()
	for _, tc := range []struct {
		what   string
		file   string
		data   []byte
		wants  []string // in the output
		status int      // the exit status: 0, 1 (not read) or 2 (damaged)
		err    string   // what the error says
	}{
		{"whole", name, good, []string{"baseOffset: 1 lastOffset: 1", "crcValid: true"}, 0, ""},
		{"torn tail", name, good[:len(good)-5], []string{"baseOffset: 0 lastOffset: 0", "not a whole batch"}, 2, "80 bytes at position 85 that are not a whole batch"},
		{"flipped byte", name, flipped, []string{"baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 7 position: 0", "crcValid: true", "crcValid: false"}, 2, "the batch at position 85 (offsets 1–1) fails its CRC"},
		{"empty", name, nil, []string{"Log starting offset: 0"}, 0, ""},
		{"garbage", name, bytes.Repeat([]byte{0xa5}, 100), []string{"not a whole batch"}, 2, "100 bytes at position 0"},
		{"index cut short", partlog.SegmentFileName(0, partlog.IndexSuffix), make([]byte, 13), []string{"not a whole entry"}, 2, "a torn entry of 5 bytes at position 8"},
		{"not a segment", "orders.txt", good, nil, 1, "not a segment file"},
	} {
		path := filepath.Join(bad, tc.file)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, err := runRoot("log", "dump", "--records", path)
		status := 0
		if err != nil {
			status = 1
			var st exitStatus
			if errors.As(err, &st) {
				status = st.code
			}
		}
		if status != tc.status || (tc.err != "") != (err != nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: exit status %d, error %v; want %d and an error saying %q", tc.what, status, err, tc.status, tc.err)
		}
		for _, w := range tc.wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the dump does not say %q:\n%s", tc.what, w, out)
			}
		}
	}
}
