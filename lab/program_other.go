//go:build !unix

package lab

import (
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
