//go:build unix

package program

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each of the ways a learner's program can go wrong before it does any
// work gets a message that says which, and what to check.
func TestProgramThatDoesNotStart(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	if _, err := Start(ctx, Spec{Name: "consumer 1", Args: []string{"no-such-program-mqlab"}}); err == nil ||
		!strings.Contains(err.Error(), `consumer 1 does not start: "no-such-program-mqlab" is not a program on PATH`) ||
		!strings.Contains(err.Error(), "check the command after --") {
		t.Errorf("a program that is not there: %v", err)
	}
	if _, err := Start(ctx, Spec{}); err == nil || !strings.Contains(err.Error(), "give its command after --") {
		t.Errorf("no program at all: %v", err)
	}
}

// Standard output arrives a line at a time; an exit says its status and
// the end of standard error.
func TestProgramLinesAndExit(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	p, err := Start(ctx, Spec{Args: []string{"sh", "-c", `echo "$GREETING"; echo second; echo oops >&2; exit 3`},
		Env: []string{"GREETING=processed order-1"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for l := range p.Lines() {
		got = append(got, l)
	}
	if strings.Join(got, "|") != "processed order-1|second" {
		t.Errorf("standard output read as %q", got)
	}
	<-p.Done()
	if ex := p.Exit(); !strings.Contains(ex, "exit status 3") || !strings.Contains(ex, "standard error:\noops") {
		t.Errorf("the exit reads %q", ex)
	}
}

// A kill ends the program and what it started, and so does the end of
// the context it was started with; the pipe a child held does not keep
// the program from being seen to end.
func TestProgramKillEndsItsGroup(t *testing.T) {
	for _, how := range []string{"kill", "context"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctxFor(t, 10*time.Second))
			defer cancel()
			p, err := Start(ctx, Spec{Args: []string{"sh", "-c", "sleep 60 & echo $!; wait"}})
			if err != nil {
				t.Fatal(err)
			}
			child, err := strconv.Atoi(<-p.Lines())
			if err != nil {
				t.Fatalf("the child's pid: %v", err)
			}
			if how == "kill" {
				p.Kill()
			} else {
				cancel()
				if !p.WaitTimeout(5 * time.Second) {
					t.Fatal("the program outlived its context")
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for running(child) {
				if time.Now().After(deadline) {
					t.Fatalf("the program's child %d is still running", child)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if ex := p.Exit(); ex != "killed by the lab" {
				t.Errorf("the exit reads %q", ex)
			}
		})
	}
}

// running says whether process pid still runs: it exists and, where
// /proc says, is not a zombie waiting for whoever adopted it to reap it.
func running(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) || !procMounted()
	}
	// The state follows the command's closing parenthesis: "123 (sleep) Z …".
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// A line too long to be a line is garbage: the read stops and the exit
// says so.
func TestProgramGarbageOutput(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	p, err := Start(ctx, Spec{Name: "consumer 1", Args: []string{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}})
	if err != nil {
		t.Fatal(err)
	}
	for range p.Lines() {
	}
	<-p.Done()
	if ex := p.Exit(); !strings.Contains(ex, "consumer 1 wrote a line of standard output longer than 64 KB") {
		t.Errorf("the exit reads %q", ex)
	}
}

// A paused program writes nothing until it is resumed, and then goes on
// from where it stood.
func TestProgramPauseResume(t *testing.T) {
	ctx := ctxFor(t, 20*time.Second)
	p, err := Start(ctx, Spec{Args: []string{"sh", "-c", "n=0; while true; do n=$((n+1)); echo $n; sleep 0.01; done"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	last, _ := strconv.Atoi(<-p.Lines())
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	// What it wrote before the stop took hold may still be in the pipe;
	// after that, nothing for a while.
	for drained := false; !drained; {
		select {
		case l := <-p.Lines():
			last, _ = strconv.Atoi(l)
		case <-time.After(300 * time.Millisecond):
			drained = true
		}
	}
	select {
	case l := <-p.Lines():
		t.Fatalf("a paused program wrote %q", l)
	case <-time.After(200 * time.Millisecond):
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-p.Lines():
		if n, _ := strconv.Atoi(l); n != last+1 {
			t.Errorf("after the resume it wrote %d, want %d: it should go on where it stood", n, last+1)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the resumed program wrote nothing")
	}
}

// A program that exits leaves nothing it started running, and its end is
// known at once though a child still holds its output.
func TestProgramExitEndsItsGroup(t *testing.T) {
	ctx := ctxFor(t, 10*time.Second)
	p, err := Start(ctx, Spec{Args: []string{"sh", "-c", "sleep 60 & echo $!; echo bye >&2; exit 4"}})
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(<-p.Lines())
	if err != nil {
		t.Fatalf("the child's pid: %v", err)
	}
	if !p.WaitTimeout(time.Second) {
		t.Fatal("the program's end was not known within a second of its exit")
	}
	if ex := p.Exit(); !strings.Contains(ex, "exit status 4") || !strings.Contains(ex, "bye") {
		t.Errorf("the exit reads %q", ex)
	}
	deadline := time.Now().Add(5 * time.Second)
	for running(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d outlived it", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
