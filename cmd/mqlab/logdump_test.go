package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/broker/partlog"
)

// mqlab log dump prints a segment file the lab wrote, and says what is
// wrong with a path that is not one.
func TestLogDumpFromTheShell(t *testing.T) {
	dir := t.TempDir()
	l, err := partlog.New(partlog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(partlog.Batch{Records: []partlog.Record{{Timestamp: 1e15, Key: []byte("881"), Value: []byte("order 881 placed")}}}, 7); err != nil {
		t.Fatal(err)
	}
	l.DetachDir()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		root := rootCmd()
		root.SetOut(&out)
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("log", "dump", "--records", filepath.Join(dir, partlog.SegmentFileName(0, partlog.LogSuffix)))
	if err != nil || !strings.Contains(out, "baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 7") ||
		!strings.Contains(out, "key: 881 payload: order 881 placed") {
		t.Errorf("log dump: %v\n%s", err, out)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, "is a folder"},
		{filepath.Join(dir, "missing.log"), "no such file"},
	} {
		if _, err := run("log", "dump", tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("log dump %s: %v; want an error saying %q", tc.path, err, tc.want)
		}
	}
}
