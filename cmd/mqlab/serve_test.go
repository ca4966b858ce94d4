package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Flags that cannot work together are refused with what would.
func TestServeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ssh", "127.0.0.1:0", "--keep-own-labs"}, "--keep-own-labs is for --share"},
		{[]string{"--ssh", "127.0.0.1:0", "--max-sessions", "0"}, "want at least 1"},
		{[]string{}, "serve needs --ssh ADDR"},
	} {
		cmd := serveCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v; want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// A server keeps its sessions' lab folders under its process id; the
// next one to start removes the folders of servers that are gone, and
// nothing else.
func TestSweepLabs(t *testing.T) {
	dir := t.TempDir()
	gone, mine, other := filepath.Join(dir, "999999999"), filepath.Join(dir, strconv.Itoa(os.Getpid())), filepath.Join(dir, "notes")
	for _, d := range []string{gone, mine, other} {
		if err := os.MkdirAll(filepath.Join(d, "ada-1", "n1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepLabs(dir)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the folder of a server that is gone is still there (%v)", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s went: %v", d, err)
		}
	}
}
