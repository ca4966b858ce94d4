package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

const keepLogsUsage = "write the replicas' segment files to this folder (its n1…n9 folders are replaced) and keep them; default: a temporary folder, removed when the lab closes"

func addKeepLogsFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "keep-logs", "", keepLogsUsage)
}

// keepLogsDir makes --keep-logs DIR an absolute folder that exists, so a
// learner can open its files from another shell, or says what is wrong
// with it before any lab starts.
func keepLogsDir(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--keep-logs %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("--keep-logs %s: that is a file; name a folder (it is made if missing), e.g. --keep-logs ./mqlab-logs", dir)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("--keep-logs %s: cannot make the folder: %w", dir, err)
	}
	return abs, nil
}

// sayLogDir tells where the lab's segment files are, and whether they
// outlive it.
func sayLogDir(w io.Writer, dir string, kept bool) {
	if dir == "" {
		return
	}
	if kept {
		fmt.Fprintf(w, "mqlab: the segment files are in %s and stay there (mqlab log dump FILE reads one)\n", dir)
		return
	}
	fmt.Fprintf(w, "mqlab: the segment files are in %s until the lab closes (--keep-logs DIR keeps them)\n", dir)
}
