package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

const testCode = "open-sesame"

// newTestServer serves mqlab on a free loopback port with the join code
// testCode; it is closed when the test ends.
func newTestServer(t testing.TB, class *source.Class) *Server {
	t.Helper()
	s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast",
		StateDir: t.TempDir(), Class: class})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

func dial(s *Server, user, code string) (*gossh.Client, error) {
	return gossh.Dial("tcp", s.Addr().String(), &gossh.ClientConfig{
		User:            user,
		Auth:            []gossh.AuthMethod{answerCode(code)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), // a test's own server, on loopback
		Timeout:         10 * time.Second,
	})
}

// answerCode answers the server's question for the join code, and fails
// the login unless the question is the one sshpass -p looks for.
func answerCode(code string) gossh.AuthMethod {
	return gossh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
		answers := make([]string, len(questions))
		for i, q := range questions {
			if q != JoinPrompt {
				return nil, fmt.Errorf("asked %q; want %q", q, JoinPrompt)
			}
			answers[i] = code
		}
		return answers, nil
	})
}

// screen is one SSH session's terminal as the test reads it.
type screen struct {
	conn *gossh.Client
	sess *gossh.Session
	in   io.WriteCloser
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func (sc *screen) Write(p []byte) (int, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.out.Write(p)
}

// text is everything the session printed, escape sequences removed.
func (sc *screen) text() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return ansi.Strip(sc.out.String())
}

// openScreen logs in as user and opens a 100x30 xterm-256color terminal
// running cmd (the picker when "").
func openScreen(t testing.TB, s *Server, user, cmd string) *screen {
	t.Helper()
	return openTerm(t, s, user, cmd, "xterm-256color")
}

func openTerm(t testing.TB, s *Server, user, cmd, term string) *screen {
	t.Helper()
	c, err := dial(s, user, testCode)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	sc := &screen{conn: c, sess: sess, done: make(chan error, 1)}
	sess.Stdout = sc
	sess.Stderr = sc
	if sc.in, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty(term, 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if cmd == "" {
		err = sess.Shell()
	} else {
		err = sess.Start(cmd)
	}
	if err != nil {
		t.Fatal(err)
	}
	go func() { sc.done <- sess.Wait() }()
	if cmd == "" && s.opts.StateDir != "" || cmd == FollowCommand && s.opts.Class != nil {
		// No key: the student names themself, unless the session is refused.
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(sc.text(), "your name:") && !strings.Contains(sc.text(), "mqlab: ") {
			if time.Now().After(deadline) {
				t.Fatalf("waited 20s for the name prompt; the screen shows:\n%s", tail(sc.text(), 3000))
			}
			time.Sleep(5 * time.Millisecond)
		}
		if strings.Contains(sc.text(), "your name:") {
			if _, err := sc.in.Write([]byte(user + "\r")); err != nil {
				t.Fatal(err)
			}
		}
	}
	return sc
}

// waitFor waits up to d for the session to have printed want.
func (sc *screen) waitFor(t testing.TB, d time.Duration, want string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(sc.text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %q on the screen; it shows:\n%s", d, want, tail(sc.text(), 3000))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (sc *screen) send(t *testing.T, keys string) {
	t.Helper()
	if _, err := sc.in.Write([]byte(keys)); err != nil {
		t.Fatal(err)
	}
}

// repainted waits until the screen has drawn something new twice (the
// header's clock moves every 200 ms of lab time).
func (sc *screen) repainted(t *testing.T) {
	t.Helper()
	for range 2 {
		n := len(sc.text())
		deadline := time.Now().Add(10 * time.Second)
		for len(sc.text()) == n {
			if time.Now().After(deadline) {
				t.Fatal("the screen drew nothing new for 10 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// typeCommand opens the prompt, types line and runs it. A terminal sends
// what arrives together as one key of many runes, so the prompt key goes
// alone.
func (sc *screen) typeCommand(t *testing.T, line string) {
	t.Helper()
	sc.send(t, ":")
	sc.waitFor(t, 10*time.Second, "a lab command, e.g. kill n2")
	sc.send(t, line)
	sc.waitFor(t, 10*time.Second, ": "+line)
	sc.send(t, "\r")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// A session gets the lesson picker, with a lab of its own, and q ends it.
func TestServeSessionGetsThePicker(t *testing.T) {
	s := newTestServer(t, nil)
	sc := openScreen(t, s, "ada", "")
	sc.waitFor(t, 20*time.Second, "enter opens the lesson on a live three-node cluster")
	sc.send(t, "q")
	select {
	case <-sc.done:
	case <-time.After(20 * time.Second):
		t.Fatal("q did not end the session")
	}
}

// Each session draws in the colours its own terminal takes: 256 colours
// for an xterm-256color, none for a dumb terminal, whatever the server's.
func TestServeColoursPerSession(t *testing.T) {
	s := newTestServer(t, nil)
	colour := openTerm(t, s, "ada", "", "xterm-256color")
	plain := openTerm(t, s, "bob", "", "dumb")
	for _, sc := range []*screen{colour, plain} {
		sc.waitFor(t, 20*time.Second, "enter opens the lesson on a live three-node cluster")
	}
	raw := func(sc *screen) string {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.out.String()
	}
	if !strings.Contains(raw(colour), "\x1b[38;5;") {
		t.Error("the xterm-256color session got no 256-colour escape")
	}
	if strings.Contains(raw(plain), "\x1b[38;") {
		t.Error("the dumb terminal's session got colour escapes")
	}
}

// An SSH user's name becomes one folder for its progress, inside the
// state folder whatever it says.
func TestUserDir(t *testing.T) {
	for user, want := range map[string]string{"ada": "ada", "../../etc": ".._.._etc", "..": "_..", "": "_", "a b/c": "a_b_c"} {
		if got := userDir(user); got != want {
			t.Errorf("userDir(%q) = %q; want %q", user, got, want)
		}
	}
}

// The wrong code, or none, gets nobody in.
func TestServeRefusesTheWrongCode(t *testing.T) {
	s := newTestServer(t, nil)
	for _, code := range []string{"open-sesam", ""} {
		if c, err := dial(s, "eve", code); err == nil {
			c.Close()
			t.Errorf("code %q let eve in", code)
		} else if !strings.Contains(err.Error(), "unable to authenticate") {
			t.Errorf("code %q: %v; want an authentication refusal", code, err)
		}
	}
	if c, err := dial(s, "ada", testCode); err != nil {
		t.Errorf("the right code: %v", err)
	} else {
		c.Close()
	}
}

// Past the limit a session is refused with a word of why.
func TestServeRefusesPastTheLimit(t *testing.T) {
	s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast", MaxSessions: 1, Class: source.NewClass()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	first := openScreen(t, s, "ada", FollowCommand)
	first.waitFor(t, 20*time.Second, "FOLLOWING (read-only)")
	second := openScreen(t, s, "bob", FollowCommand)
	second.waitFor(t, 20*time.Second, "this server is full: 1 sessions are open")
	select {
	case err := <-second.done:
		if err == nil {
			t.Error("the refused session ended with status 0; want 1")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the refused session did not end")
	}
}

// teacherScreen shares a lab the way the teacher's screen does: it reads
// the source every time it changes, which publishes to the class.
func teacherScreen(t testing.TB, class *source.Class, src view.Source) *source.Shared {
	t.Helper()
	sh := class.Share(src)
	sh.View() // the teacher's first frame
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-src.Changes():
				sh.View()
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done; sh.Close() })
	return sh
}

// A follower sees the teacher's lab live: the teacher's kill shows on its
// screen within a second. Its own k, and a typed kill, change nothing.
func TestServeFollowerWatchesTheTeachersLab(t *testing.T) {
	class := source.NewClass()
	l, labSrc := newTestLab(t, "topic create orders partitions=1")
	teacherScreen(t, class, labSrc)
	s := newTestServer(t, class)
	sc := openScreen(t, s, "ada", FollowCommand)
	sc.waitFor(t, 20*time.Second, "n1 ● up")
	sc.send(t, "k")
	sc.repainted(t) // so that k is read alone, not with the prompt's key
	sc.typeCommand(t, "kill n2")
	sc.waitFor(t, 10*time.Second, "kill n2 was not run: you follow the teacher's lab")
	for _, n := range l.Snapshot().Cluster.Nodes {
		if !n.Up {
			t.Fatalf("%s is down after the follower's k and kill: a follower changed the teacher's lab", n.ID)
		}
	}
	mustExec(t, labSrc, "kill n1")
	killed := time.Now()
	sc.waitFor(t, 10*time.Second, "n1 ✗ down")
	if d := time.Since(killed); d > time.Second {
		t.Errorf("the teacher's kill reached the follower's screen after %v; want within a second", d)
	}
}

// The students' answers to the teacher's open question are tallied on the
// teacher's screen, before the reveal; each follower sees its own choice.
func TestServeClassTally(t *testing.T) {
	class := source.NewClass()
	src := newLessonSource(t, source.LessonOptions{})
	mustExec(t, src, "lesson goto 2")
	teacher := teacherScreen(t, class, src)
	s := newTestServer(t, class)
	ada := openScreen(t, s, "ada", FollowCommand)
	bob := openScreen(t, s, "bob", FollowCommand)
	for _, sc := range []*screen{ada, bob} {
		sc.waitFor(t, 20*time.Second, "n1 dies. At which epoch")
	}
	ada.send(t, "b")
	bob.send(t, "a")
	ada.waitFor(t, 10*time.Second, "You chose b)")
	bob.waitFor(t, 10*time.Second, "You chose a)")
	var got *view.ClassTally
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pr := teacher.View().Lesson.Prediction; pr != nil && pr.Class != nil {
			got = pr.Class
			if got.Answered == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the teacher's tally is %+v; want both answers", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if want := "class: 2 of 2 answered — a 1 · b 1"; got.String() != want {
		t.Errorf("the tally reads %q; want %q", got.String(), want)
	}
	mustExec(t, src, "predict b")
	ada.waitFor(t, 10*time.Second, "You chose b) and predicted it")
	bob.waitFor(t, 10*time.Second, "You chose a); it was b)")
}

// Each own-lab session writes its segment files to a folder of its own
// under LabsDir, named after its user, removed when the session ends
// unless the server keeps them.
func TestServeSessionLabFolder(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) {
			labs := filepath.Join(t.TempDir(), "labs")
			s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast", LabsDir: labs, KeepLabs: keep})
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- s.Serve() }()
			defer func() {
				s.Close()
				<-served
			}()
			sc := openScreen(t, s, "ada", "")
			sc.waitFor(t, 20*time.Second, "enter opens the lesson on a live three-node cluster")
			entries, _ := os.ReadDir(labs)
			if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "ada-") {
				t.Fatalf("%s holds %v while ada's session runs; want one folder named ada-…", labs, entries)
			}
			sc.send(t, "q")
			select {
			case <-sc.done:
			case <-time.After(20 * time.Second):
				t.Fatal("q did not end the session")
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				entries, _ = os.ReadDir(labs)
				if keep && len(entries) == 1 || !keep && len(entries) == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the session ended %s holds %v; kept: %v", labs, entries, keep)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
