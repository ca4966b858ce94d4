//go:build !unix

package program

import (
	"errors"
	"os"
	"syscall"
)

// ownGroup: without Unix process groups a program runs in mqlab's, and
// only the program itself can be killed.
func ownGroup() *syscall.SysProcAttr { return nil }

// killGroup ends the process pgid.
func killGroup(pgid int) {
	if p, err := os.FindProcess(pgid); err == nil {
		p.Kill()
	}
}

// stopGroup: a program cannot be paused here.
func stopGroup(int, bool) error {
	return errors.New("pausing a program needs Unix signals (SIGSTOP), which this system does not have")
}
