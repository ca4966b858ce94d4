// Package program supervises a learner's own program, run as a client of a
// lab's cluster (a challenge's consumer): started in a process group of its
// own so that a kill ends it and everything it started, paused and resumed
// as a whole, with its standard output read a line at a time and the end of
// its standard error kept for the verdict.
package program

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Spec says how to run a learner's program.
type Spec struct {
	Name string   // what the timeline and the verdict call it: "consumer 1"
	Args []string // the command and its arguments
	Env  []string // KEY=VALUE on top of mqlab's own environment
	Dir  string   // its working directory; "" for mqlab's
}

// stderrKept is how much of the end of a program's standard error a
// Process keeps to show.
const stderrKept = 4 << 10

// maxLine is the longest standard output line a Process reads; a longer
// one ends the reading with an error, as garbage.
const maxLine = 64 << 10

// Process is one run of a program.
type Process struct {
	spec  Spec
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}

	mu      sync.Mutex
	stderr  tailBuffer
	exitErr error         // once done: nil for a clean exit
	errRead chan struct{} // closed once standard error is read to its end
	readErr error         // a standard output line too long to read
	killed  bool
}

// Start starts spec in a process group of its own. An error says
// the program did not start, and why, in words for the learner. ctx ending
// kills the program's whole group.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if len(spec.Args) == 0 || spec.Args[0] == "" {
		return nil, errors.New("no program to run: give its command after --, like mqlab challenge at-least-once -- python3 consumer.py")
	}
	path, err := exec.LookPath(spec.Args[0])
	if err != nil {
		return nil, fmt.Errorf("%s does not start: %q is not a program on PATH or a file that can run (%v); check the command after --", spec.label(), spec.Args[0], err)
	}
	cmd := exec.Command(path, spec.Args[1:]...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = ownGroup()
	// Standard output is a pipe of our own, not exec's, so that the
	// program's end is known when it exits even if something it started
	// still holds the pipe open.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s does not start: %w", spec.label(), err)
	}
	cmd.Stdout = w
	// Standard error too: the program's end is its own exit, even while
	// something it started still writes there.
	errOut, errW, err := os.Pipe()
	if err != nil {
		out.Close()
		w.Close()
		return nil, fmt.Errorf("%s does not start: %w", spec.label(), err)
	}
	p := &Process{spec: spec, cmd: cmd, lines: make(chan string, 256), done: make(chan struct{}), errRead: make(chan struct{})}
	cmd.Stderr = errW
	err = cmd.Start()
	w.Close()
	errW.Close()
	if err != nil {
		out.Close()
		errOut.Close()
		return nil, fmt.Errorf("%s does not start: %v; check the command after --", spec.label(), err)
	}
	go p.read(out)
	go func() {
		defer close(p.errRead)
		defer errOut.Close()
		io.Copy(&p.stderr, errOut)
	}()
	go p.wait()
	go func() {
		select {
		case <-ctx.Done():
			p.Kill()
		case <-p.done:
		}
	}()
	return p, nil
}

func (s Spec) label() string {
	if s.Name != "" {
		return s.Name
	}
	return "the program"
}

// read hands out standard output a line at a time, until nothing holds
// the pipe open any more.
func (p *Process) read(out *os.File) {
	defer out.Close()
	defer close(p.lines)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
	if err := sc.Err(); err != nil {
		p.mu.Lock()
		p.readErr = fmt.Errorf("%s wrote a line of standard output longer than %d KB: %w", p.spec.label(), maxLine>>10, err)
		p.mu.Unlock()
		io.Copy(io.Discard, out) // let it run on; the caller decides
	}
}

// stderrGrace is how long the end of a program waits for the last of
// what it wrote to standard error, which something it started may hold.
const stderrGrace = 100 * time.Millisecond

// wait notes how the program ended.
func (p *Process) wait() {
	err := p.cmd.Wait()
	// What the program started ends with it: nothing of a run outlives it
	// to write to a later run's database or hold its pipes.
	killGroup(p.cmd.Process.Pid)
	select {
	case <-p.errRead:
	case <-time.After(stderrGrace):
	}
	p.mu.Lock()
	p.exitErr = err
	p.mu.Unlock()
	close(p.done)
}

// Lines delivers the program's standard output, a line at a time, and is
// closed once nothing holds it open (usually when the program ends). The
// caller must keep reading it, or the program blocks on a full pipe.
func (p *Process) Lines() <-chan string { return p.lines }

// Done is closed once the program has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the program's process id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Kill ends the program and everything it started, at once (SIGKILL to
// its process group), and waits until it has ended.
func (p *Process) Kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	killGroup(p.cmd.Process.Pid)
	<-p.done
}

// Pause stops the program and everything it started where they stand
// (SIGSTOP to its process group), as a long garbage-collection pause or a
// swapped-out machine would: it sends nothing, not even heartbeats, until
// Resume.
func (p *Process) Pause() error { return stopGroup(p.cmd.Process.Pid, true) }

// Resume lets a paused program go on (SIGCONT) from where it stood.
func (p *Process) Resume() error { return stopGroup(p.cmd.Process.Pid, false) }

// Exit says how the program ended, once Done: "" for a clean exit, else
// in words ("exit status 3", "killed by the lab"), followed by the end of
// what it wrote to standard error.
func (p *Process) Exit() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	switch {
	case p.killed:
		b.WriteString("killed by the lab")
	case p.exitErr != nil:
		b.WriteString(p.exitErr.Error())
	}
	if p.readErr != nil {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.readErr.Error())
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" && !p.killed {
		if b.Len() == 0 {
			b.WriteString("exit status 0")
		}
		b.WriteString("; the end of its standard error:\n" + tail)
	}
	return b.String()
}

// Stderr is the end of what the program wrote to standard error.
func (p *Process) Stderr() string { return p.stderr.String() }

// WaitTimeout waits for the program to end, up to d; false if it did not.
func (p *Process) WaitTimeout(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// tailBuffer keeps the last stderrKept bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - stderrKept; over > 0 {
		t.buf = t.buf[over:]
		t.cut = true
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(bytes.ToValidUTF8(t.buf, []byte("?")))
	if t.cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:] // from a whole line
		}
		s = "…\n" + s
	}
	return s
}
