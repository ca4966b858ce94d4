//go:build unix

package program

import "syscall"

// ownGroup starts a program as the leader of a process group of its own,
// so that killGroup reaches everything it starts.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends process group pgid at once.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }

// stopGroup pauses or resumes process group pgid, as SIGSTOP and SIGCONT do.
func stopGroup(pgid int, stop bool) error {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	return syscall.Kill(-pgid, sig)
}
