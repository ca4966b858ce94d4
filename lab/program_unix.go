//go:build unix

package lab

import "syscall"

// ownGroup starts a program as the leader of a process group of its own,
// so that killGroup reaches everything it starts.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends process group pgid at once.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }
