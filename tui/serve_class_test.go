package tui

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// waitTally waits for the teacher's screen to show want as the class's
// tally of the question on screen.
func waitTally(t *testing.T, teacher view.Source, want string) view.State {
	t.Helper()
	got := ""
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := teacher.View()
		if les := v.Lesson; les != nil && les.Prediction != nil && les.Prediction.Class != nil {
			if got = les.Prediction.Class.String(); got == want {
				return v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the teacher's tally reads %q; want %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitBlinksOver waits for the prompt cursor's last blink timer (half a
// second) of a session that has ended: it is no leak, only late.
func waitBlinksOver(t *testing.T) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "cursor.(*Model).BlinkCmd") {
			return
		}
	}
}

// The tally counts each person connected once: a student whose ssh
// client dies takes their vote along, comes back with none and answers
// again; an answer given by key cannot be changed by typing :predict;
// the teacher's reveal answers nothing for the teacher, and the tally
// stays to be discussed.
func TestServeTallyOnePersonOneVote(t *testing.T) {
	class := source.NewClass()
	src := newLessonSource(t, source.LessonOptions{})
	t.Cleanup(func() { waitBlinksOver(t) }) // after the sessions end, before the leak check
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
	waitTally(t, teacher, "class: 2 of 2 answered — a 1 · b 1")

	// bob's client dies without a word: his vote goes with him.
	bob.conn.Close()
	waitTally(t, teacher, "class: 1 of 1 answered — a 0 · b 1")

	// He comes back: his screen asks again, and his new answer counts once.
	bob = openScreen(t, s, "bob", FollowCommand)
	bob.waitFor(t, 20*time.Second, "n1 dies. At which epoch")
	waitTally(t, teacher, "class: 1 of 2 answered — a 0 · b 1")
	bob.send(t, "b")
	bob.waitFor(t, 10*time.Second, "You chose b)")
	waitTally(t, teacher, "class: 2 of 2 answered — a 0 · b 2")

	// ada's b is locked: :predict a is refused, and says why.
	ada.typeCommand(t, "predict a")
	ada.waitFor(t, 10*time.Second, "you answered b) already")
	v := waitTally(t, teacher, "class: 2 of 2 answered — a 0 · b 2")
	if r := v.Class; r == nil || len(r.Students) != 2 || r.Answered != 2 || r.Following != 2 {
		t.Errorf("the teacher's roster is %+v; want ada and bob, both answered", r)
	}

	// The teacher reveals without answering; the split stays on screen.
	out, err := teacher.Exec(context.Background(), ParseOrder(source.CmdReveal))
	if err != nil || !strings.Contains(out, "the answer is b)") {
		t.Fatalf("reveal: %q, %v", out, err)
	}
	v = waitTally(t, teacher, "class: 2 of 2 answered — a 0 · b 2")
	if pr := v.Lesson.Prediction; pr.Answer < 0 || pr.Chosen >= 0 {
		t.Errorf("after reveal the teacher's question reads chosen %d, answer %d; want no choice and the answer shown", pr.Chosen, pr.Answer)
	}
	ada.waitFor(t, 10*time.Second, "You chose b) and predicted it")
}

// The teacher's q asks while students are connected, n keeps the class
// going, y quits; the server then ends every session the way a student's
// own q does — the terminal leaves the alternate screen, shows the
// cursor, stops reporting the mouse and pastes — and says goodbye.
func TestServeTeacherQuitAsksAndEndsSessionsCleanly(t *testing.T) {
	class := source.NewClass()
	_, labSrc := newTestLab(t, "topic create orders partitions=1")
	sh := teacherScreen(t, class, labSrc)
	s := newTestServer(t, class)
	ada := openScreen(t, s, "ada", FollowCommand)
	bob := openScreen(t, s, "bob", "")
	ada.waitFor(t, 20*time.Second, "n1 ● up")
	bob.waitFor(t, 20*time.Second, "enter opens the lesson")
	if strings.Contains(bob.text(), "Challenges") {
		t.Error("an own-lab session over SSH lists the challenges, which need a program of the student's own")
	}

	m := New(sh, Options{ConfirmQuit: func() string { return s.QuitQuestion(false) }})
	t.Cleanup(m.Close)
	m.Update(teaSize(100, 30))
	if !strings.Contains(m.View(), "2 connected") {
		t.Errorf("the teacher's header does not count the class:\n%s", m.View())
	}
	if _, cmd := m.Update(keyMsg("q")); cmd != nil {
		t.Fatal("q quit at once with students connected")
	}
	if want := "2 students are connected: quit and end their sessions? y/n"; !strings.Contains(m.View(), want) {
		t.Fatalf("q did not ask %q:\n%s", want, m.View())
	}
	if _, cmd := m.Update(keyMsg("n")); cmd != nil {
		t.Fatal("n quit")
	}
	m.Update(keyMsg("q"))
	_, cmd := m.Update(keyMsg("y"))
	if cmd == nil {
		t.Fatal("y did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("y did not quit")
	}

	s.Close() // as mqlab serve does once the teacher's screen has quit
	for _, sc := range []*screen{ada, bob} {
		select {
		case <-sc.done:
		case <-time.After(20 * time.Second):
			t.Fatal("a student's session did not end")
		}
		sc.mu.Lock()
		raw := sc.out.String()
		sc.mu.Unlock()
		opened := strings.LastIndex(raw, "\x1b[?1049h")
		for what, seq := range map[string]string{"alternate screen off": "\x1b[?1049l", "cursor shown": "\x1b[?25h",
			"mouse off": "\x1b[?1002l", "bracketed paste off": "\x1b[?2004l"} {
			if strings.LastIndex(raw, seq) < opened {
				t.Errorf("the session ended without %s (%q)", what, seq)
			}
		}
		bye := strings.LastIndex(raw, GoodbyeServerStops)
		if bye < 0 || bye < strings.LastIndex(raw, "\x1b[?1049l") {
			t.Errorf("the student did not read the goodbye on the restored terminal; the session ended with %q", tail(raw, 300))
		}
	}
}

// The join code is asked as "join code (password):", which sshpass -p
// answers, and asked the same way after a wrong one: the server offers
// no password method, whose prompt OpenSSH would write itself. Joins
// and refusals are logged.
func TestServeAsksForTheCodeTheSameWayEveryTime(t *testing.T) {
	var log safeBuffer
	s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast", Class: source.NewClass(), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	var asked []string
	wrong := gossh.RetryableAuthMethod(gossh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
		asked = append(asked, questions...)
		return make([]string, len(questions)), nil
	}), 3)
	_, err = gossh.Dial("tcp", s.Addr().String(), &gossh.ClientConfig{User: "eve", Auth: []gossh.AuthMethod{wrong, gossh.Password(testCode)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err == nil {
		t.Fatal("three wrong codes and a password let eve in")
	}
	if len(asked) != 3 {
		t.Fatalf("asked %d times; want 3", len(asked))
	}
	for _, q := range asked {
		if q != JoinPrompt {
			t.Errorf("asked %q; want %q every time", q, JoinPrompt)
		}
	}
	if strings.Contains(err.Error(), "password") {
		t.Errorf("the server offered the password method: %v", err)
	}
	ada := openScreen(t, s, "ada", FollowCommand)
	ada.waitFor(t, 20*time.Second, "FOLLOWING")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "joined: ada") {
		if time.Now().After(deadline) {
			t.Fatalf("the log has no join for ada:\n%s", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "refused eve from 127.0.0.1:") || !strings.Contains(log.String(), "a wrong join code") {
		t.Errorf("the log does not say eve was refused, and why:\n%s", log.String())
	}
}

// With --keep-own-labs the teacher's quit ends only the sessions that
// follow the shared lab: a student with a lab of their own keeps it.
func TestServeEndFollowersKeepsOwnLabs(t *testing.T) {
	class := source.NewClass()
	s := newTestServer(t, class)
	ada := openScreen(t, s, "ada", FollowCommand)
	bob := openScreen(t, s, "bob", "")
	ada.waitFor(t, 20*time.Second, "FOLLOWING")
	bob.waitFor(t, 20*time.Second, "enter opens the lesson")
	if q := s.QuitQuestion(true); q != "1 student is following your lab: quit and end their sessions (labs of their own stay)? y/n" {
		t.Errorf("the teacher is asked %q", q)
	}
	s.End(GoodbyeTeacherLeft, true)
	select {
	case <-ada.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the follower's session did not end")
	}
	ada.waitFor(t, time.Second, GoodbyeTeacherLeft)
	select {
	case <-bob.done:
		t.Fatal("the own-lab session ended with the shared screen")
	default:
	}
	if all, following := s.Sessions(); all != 1 || following != 0 {
		t.Errorf("%d sessions, %d following; want bob's own lab alone", all, following)
	}
}

// safeBuffer is a log the server writes while the test reads it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Two laptops that log in as one user keep their progress apart: by the
// key each offers, or, with none, by the name each student types.
func TestServeProgressPerPerson(t *testing.T) {
	state := t.TempDir()
	s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast", StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	open := func(auth []gossh.AuthMethod, name string) {
		c, err := gossh.Dial("tcp", s.Addr().String(), &gossh.ClientConfig{User: "student", Auth: auth,
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		sc := &screen{conn: c, sess: sess, done: make(chan error, 1)}
		sess.Stdout, sess.Stderr = sc, sc
		if sc.in, err = sess.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := sess.RequestPty("xterm", 30, 100, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		if name != "" {
			sc.waitFor(t, 20*time.Second, "your name:")
			sc.send(t, name+"\r")
		}
		sc.waitFor(t, 20*time.Second, "enter opens the lesson")
		sc.send(t, "\r") // the first lesson: its step is kept
		sc.waitFor(t, 20*time.Second, "step 1/")
	}
	for range 2 {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		signer, err := gossh.NewSignerFromKey(key)
		if err != nil {
			t.Fatal(err)
		}
		open([]gossh.AuthMethod{gossh.PublicKeys(signer), answerCode(testCode)}, "")
	}
	open([]gossh.AuthMethod{answerCode(testCode)}, "ada")
	open([]gossh.AuthMethod{answerCode(testCode)}, "bob")
	var files []string
	deadline := time.Now().Add(20 * time.Second)
	for len(files) < 4 && time.Now().Before(deadline) {
		files, _ = filepath.Glob(filepath.Join(state, "users", "student", "*", "progress.json"))
		time.Sleep(10 * time.Millisecond)
	}
	if len(files) != 4 {
		t.Fatalf("progress files %v; want one for each key and each name, four", files)
	}
	for _, want := range []string{"name-ada", "name-bob", "SHA256-"} {
		if !strings.Contains(strings.Join(files, " "), want) {
			t.Errorf("no progress folder %s*: %v", want, files)
		}
	}
}

// A name that is no folder name is refused with what would do.
func TestAskNameRefusesABadName(t *testing.T) {
	opened := ""
	a := newAskName(nil, "student", []string{"why"}, func(name string) (tea.Model, error) {
		opened = name
		return newFakeModel(), nil
	})
	a.Update(teaSize(80, 24))
	for _, r := range "../x" {
		a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	a.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if opened != "" || !strings.Contains(a.View(), "A name is one word of letters, digits") {
		t.Errorf("../x opened %q; the screen says:\n%s", opened, a.View())
	}
	for range 4 {
		a.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	for _, r := range "ada.l" {
		a.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	a.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if opened != "ada.l" || a.View() != "fake" {
		t.Errorf("ada.l opened %q; the screen says:\n%s", opened, a.View())
	}
}

// fakeModel is a program that draws one word.
type fakeModel struct{}

func newFakeModel() fakeModel                           { return fakeModel{} }
func (fakeModel) Init() tea.Cmd                         { return nil }
func (f fakeModel) Update(tea.Msg) (tea.Model, tea.Cmd) { return f, nil }
func (fakeModel) View() string                          { return "fake" }

// The teacher's picker asks too before q ends the class.
func TestAppQuitAsksOnThePicker(t *testing.T) {
	asked := "3 students are connected: quit and end their sessions? y/n"
	app, err := NewApp(AppOptions{Lessons: []*lessons.Lesson{testLesson(t)}, Timing: "fast", ConfirmQuit: func() string { return asked }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	app.Update(teaSize(100, 30))
	if _, cmd := app.Update(keyMsg("q")); cmd != nil || !strings.Contains(app.View(), "? "+asked) {
		t.Fatalf("q on the picker did not ask:\n%s", app.View())
	}
	if _, cmd := app.Update(keyMsg("x")); cmd != nil || !strings.Contains(app.View(), "Not quitting") {
		t.Fatalf("a key other than y quit, or said nothing:\n%s", app.View())
	}
	app.Update(keyMsg("q"))
	if _, cmd := app.Update(keyMsg("y")); cmd == nil {
		t.Fatal("y did not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("y did not quit")
	}
}
