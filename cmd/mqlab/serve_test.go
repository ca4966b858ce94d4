package main

import (
	"bytes"
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
