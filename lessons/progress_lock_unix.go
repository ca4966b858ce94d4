//go:build unix

package lessons

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path (made if missing) that other
// processes taking it wait for, and returns its release. Two mqlab
// running at once then read, change and write the progress file in turn.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("progress: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("progress: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
