package tui

// mqlab over SSH: every session gets the lesson picker and a lab of its
// own, or, with the command "follow", the teacher's shared lab read-only.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/keygen"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/muesli/termenv"
	gossh "golang.org/x/crypto/ssh"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
)

// DefaultMaxSessions is how many SSH sessions a server takes at once
// unless told otherwise: a classroom, each with a lab of its own.
const DefaultMaxSessions = 60

// FollowCommand is the SSH command that follows the teacher's lab.
const FollowCommand = "follow"

// ServeOptions configure mqlab's SSH server.
type ServeOptions struct {
	// Addr is host:port to listen on; a missing host is 127.0.0.1.
	Addr string
	// Code is the join code, asked as the password. Empty with no
	// AuthorizedKeys: one is made (see Server.Code). Nobody gets in
	// without the code or a listed key.
	Code string
	// AuthorizedKeys is a file of public keys, one a line as in
	// ~/.ssh/authorized_keys, let in without the code.
	AuthorizedKeys string
	// MaxSessions bounds the sessions open at once (DefaultMaxSessions
	// when 0); past it a session is refused with a word of why.
	MaxSessions int
	// HostKeyPath is the server's own key, made there when missing, so
	// students' ssh knows the server again; empty: a new key in memory.
	HostKeyPath string
	// StateDir keeps each SSH user's progress under it; empty: none kept.
	StateDir string
	// LabsDir holds a folder for each own-lab session's segment files,
	// made when its lab starts and removed when the session ends unless
	// KeepLabs; empty: each lab a temporary folder of its own.
	LabsDir  string
	KeepLabs bool
	// Timing, Lessons, Sandbox and Theme are as in AppOptions, for every
	// session's own lab.
	Timing  string
	Lessons []*lessons.Lesson
	Sandbox []string
	Theme   *draw.Theme
	// Class is the teacher's shared lab that "follow" sessions watch; nil
	// when nobody shares one. Every session, following or not, is on its
	// roster.
	Class *source.Class
	// Log gets a line for every session that joins or leaves and every
	// one refused, with why; nil: none kept.
	Log io.Writer
}

// Server serves mqlab over SSH.
type Server struct {
	opts   ServeOptions
	srv    *ssh.Server
	ln     net.Listener
	code   string
	keys   []gossh.PublicKey // let in without the code
	active atomic.Int64
	wg     sync.WaitGroup // the sessions' programs and their goodbyes

	mu       sync.Mutex
	sessions map[*served]bool
	logMu    sync.Mutex
}

// served is one session with a program running.
type served struct {
	person  string // who it is (see person): one student may open two
	follows bool
	// end asks the program to quit; why is the goodbye its student reads.
	end func(why string)
}

// Goodbyes are the lines a student reads when the server ends their
// session: the teacher quit, or only closed the shared screen.
const (
	GoodbyeServerStops = "mqlab: the teacher has ended the class and stopped the server. Goodbye, and thank you for taking part."
	GoodbyeTeacherLeft = "mqlab: the teacher has closed the shared lab. Goodbye, and thank you for following."
)

// identity is the context key of who a session is (see person).
type identity struct{}

// offeredKey is the context key of the public key a client offered when
// it was not one let in without the code.
type offeredKey struct{}

// NewServer listens on opts.Addr and prepares the server; Serve serves.
func NewServer(opts ServeOptions) (*Server, error) {
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxSessions < 0 {
		return nil, fmt.Errorf("serve: at most %d sessions: want a positive number", opts.MaxSessions)
	}
	addr, err := ListenAddr(opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, code: opts.Code, sessions: map[*served]bool{}}
	if s.code == "" && opts.AuthorizedKeys == "" {
		s.code = newJoinCode()
	}
	if opts.AuthorizedKeys != "" {
		if s.keys, err = readAuthorizedKeys(opts.AuthorizedKeys); err != nil {
			return nil, err
		}
	}
	sopts := []ssh.Option{
		wish.WithMiddleware(s.session, s.limit),
	}
	if opts.HostKeyPath != "" {
		sopts = append(sopts, wish.WithHostKeyPath(opts.HostKeyPath))
	} else {
		k, err := keygen.New("", keygen.WithKeyType(keygen.Ed25519))
		if err != nil {
			return nil, fmt.Errorf("serve: a host key: %w", err)
		}
		sopts = append(sopts, wish.WithHostKeyPEM(k.RawPrivateKey()))
	}
	// A listed key gets in; any other key a client offers is noted, so
	// two laptops that log in with one user name and the code keep
	// progress apart, and the client goes on to the code.
	sopts = append(sopts, wish.WithPublicKeyAuth(func(ctx ssh.Context, k ssh.PublicKey) bool {
		for _, ok := range s.keys {
			if ssh.KeysEqual(k, ok) {
				return true
			}
		}
		if ctx.Value(offeredKey{}) == nil {
			ctx.SetValue(offeredKey{}, gossh.FingerprintSHA256(k))
		}
		return false
	}))
	if s.code != "" {
		// The code is asked by keyboard-interactive only, with one prompt
		// that says it is the password: sshpass -p finds it, and a client
		// that asks again after a wrong code asks the same way (with the
		// password method too, OpenSSH falls back to its own "password:").
		sopts = append(sopts,
			wish.WithKeyboardInteractiveAuth(func(ctx ssh.Context, ask gossh.KeyboardInteractiveChallenge) bool {
				answers, err := ask("", "mqlab: type the join code your teacher gave.", []string{JoinPrompt}, []bool{false})
				if err != nil || len(answers) != 1 {
					return false
				}
				if !s.codeOK(answers[0]) {
					s.logf("refused %s from %s: a wrong join code", ctx.User(), ctx.RemoteAddr())
					return false
				}
				return true
			}))
	}
	s.srv, err = wish.NewServer(sopts...)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s.ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	return s, nil
}

// QuitQuestion is what the teacher's q asks while students are connected,
// "" when nobody's session would end.
func (s *Server) QuitQuestion(keepOwnLabs bool) string {
	all, following := s.people()
	switch {
	case all == 0:
		return ""
	case !keepOwnLabs:
		return fmt.Sprintf("%s connected: quit and end their sessions? y/n", studentsAre(all))
	case following == 0:
		return "" // the own labs stay up
	default:
		return fmt.Sprintf("%s following your lab: quit and end their sessions (labs of their own stay)? y/n", studentsAre(following))
	}
}

// people is how many people have a session open, and how many of them
// follow the teacher's lab: a student with two sessions is one.
func (s *Server) people() (all, following int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	everyone, followers := map[string]bool{}, map[string]bool{}
	for ss := range s.sessions {
		everyone[ss.person] = true
		if ss.follows {
			followers[ss.person] = true
		}
	}
	return len(everyone), len(followers)
}

// studentsAre is "1 student is" or "12 students are".
func studentsAre(n int) string {
	if n == 1 {
		return "1 student is"
	}
	return fmt.Sprintf("%d students are", n)
}

// JoinPrompt is how the server asks for the join code.
const JoinPrompt = "join code (password): "

// readAuthorizedKeys reads a file of public keys as ~/.ssh/authorized_keys
// has them.
func readAuthorizedKeys(path string) ([]gossh.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("serve: the authorized keys: %w", err)
	}
	var keys []gossh.PublicKey
	for line := 1; len(bytes.TrimSpace(b)) > 0; line++ {
		k, _, _, rest, err := gossh.ParseAuthorizedKey(b)
		if err != nil {
			if len(keys) == 0 {
				return nil, fmt.Errorf("serve: %s: no public key in it (%v); want lines as in ~/.ssh/authorized_keys, e.g. ssh-ed25519 AAAA… ada@laptop", path, err)
			}
			break
		}
		keys = append(keys, k)
		b = rest
	}
	return keys, nil
}

// logf writes one line to the log, with the time.
func (s *Server) logf(format string, a ...any) {
	if s.opts.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// ListenAddr is addr with 127.0.0.1 for a missing host: the lab listens
// on this machine only unless told where else.
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "127.0.0.1:2222", nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("serve: address %q: %v; want HOST:PORT or :PORT, e.g. 127.0.0.1:2222", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Code is the join code students type as their password ("" when only
// authorized keys let them in).
func (s *Server) Code() string { return s.code }

// Serve serves sessions until Close.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.ln)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Close ends every session — each student reads a goodbye and gets their
// terminal back as it was — and returns once their labs are closed.
func (s *Server) Close() error {
	s.End(GoodbyeServerStops, false)
	err := s.srv.Close()
	s.wg.Wait()
	return err
}

// End ends the sessions that follow the teacher's lab, or with all every
// session: its program quits, which gives the terminal back (alternate
// screen off, cursor shown, mouse and bracketed paste off), its student
// reads why, and the session closes. It returns when they have.
func (s *Server) End(why string, followersOnly bool) {
	s.mu.Lock()
	var ending []*served
	for ss := range s.sessions {
		if ss.follows || !followersOnly {
			ending = append(ending, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range ending {
		ss.end(why)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		s.mu.Lock()
		for _, ss := range ending {
			if s.sessions[ss] {
				left++
			}
		}
		s.mu.Unlock()
		if left == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Sessions is how many sessions are open, and how many of them follow
// the teacher's lab.
func (s *Server) Sessions() (all, following int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		all++
		if ss.follows {
			following++
		}
	}
	return all, following
}

func (s *Server) codeOK(given string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(given)), []byte(s.code)) == 1
}

// newJoinCode is eight letters and digits, easy to read out in a room
// (no 0/o, 1/l/i).
func newJoinCode() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	b := make([]byte, 8)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:])
}

// limit refuses a session past MaxSessions.
func (s *Server) limit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if n := s.active.Add(1); n > int64(s.opts.MaxSessions) {
			s.active.Add(-1)
			s.logf("refused %s from %s: the server is full (%d sessions)", sess.User(), sess.RemoteAddr(), s.opts.MaxSessions)
			wish.Fatalf(sess, "mqlab: this server is full: %d sessions are open, the most it takes. Try again when someone leaves.\r\n", s.opts.MaxSessions)
			return
		}
		defer s.active.Add(-1)
		next(sess)
	}
}

// session runs the program for one session: the picker and a lab of its
// own, or with "follow" the teacher's lab.
func (s *Server) session(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		defer next(sess)
		_, windows, ok := sess.Pty()
		if !ok {
			s.logf("refused %s from %s: no terminal asked for", sess.User(), sess.RemoteAddr())
			wish.Fatalln(sess, "mqlab needs a terminal: ssh asks for one by itself, or with -t when you give a command (ssh -t … follow).")
			return
		}
		who := person(sess)
		model, done, err := s.program(sess, who)
		if err != nil {
			s.logf("refused %s from %s: %v", who.name, sess.RemoteAddr(), err)
			wish.Fatalln(sess, "mqlab: "+err.Error())
			return
		}
		s.wg.Add(1)
		defer s.wg.Done()
		p := tea.NewProgram(model, append(bm.MakeOptions(sess), tea.WithAltScreen(), tea.WithMouseCellMotion())...)
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
		var goodbye atomic.Pointer[string]
		ss := &served{person: who.key, follows: isFollow(sess), end: func(why string) {
			goodbye.Store(&why)
			cancel()
		}}
		s.mu.Lock()
		s.sessions[ss] = true
		s.mu.Unlock()
		kind := "a lab of their own"
		if ss.follows {
			kind = "follows the teacher's lab"
		}
		s.logf("joined: %s from %s, %s", who.name, sess.RemoteAddr(), kind)
		start := time.Now()
		defer func() {
			s.mu.Lock()
			delete(s.sessions, ss)
			s.mu.Unlock()
			s.logf("left: %s from %s after %s", who.name, sess.RemoteAddr(), time.Since(start).Round(time.Second))
		}()
		go func() {
			for {
				select {
				case <-ctx.Done():
					p.Quit()
					return
				case w := <-windows:
					p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
				}
			}
		}()
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			p.Run() // gives the terminal back as it ends
		}()
		select {
		case <-ran:
		case <-ctx.Done():
			select {
			case <-ran:
			case <-time.After(5 * time.Second): // a program that would not quit
				p.Kill()
				<-ran
			}
		}
		done()
		if why := goodbye.Load(); why != nil {
			fmt.Fprint(sess, "\r\n"+*why+"\r\n")
		}
	}
}

// isFollow says whether a session asked to follow the teacher's lab.
func isFollow(sess ssh.Session) bool {
	cmd := sess.Command()
	return len(cmd) == 1 && cmd[0] == FollowCommand
}

// student is who a session is: key names the person for progress and
// votes, name shows them to the teacher.
type student struct {
	key, name string
	fp        string // the key's SHA256 fingerprint; "" for none
}

// person is who a session is: its SSH user and the key it proved or
// offered, so two laptops that log in as one user are two people. A
// client that offered no key is its user on its machine (by address)
// until its student types a name (see askName), under which its
// progress is kept and its answers are counted.
func person(sess ssh.Session) student {
	fp := ""
	if k := sess.PublicKey(); k != nil {
		fp = gossh.FingerprintSHA256(k)
	} else if v, ok := sess.Context().Value(offeredKey{}).(string); ok {
		fp = v
	}
	if fp == "" {
		host, _, err := net.SplitHostPort(sess.RemoteAddr().String())
		if err != nil {
			host = sess.RemoteAddr().String()
		}
		return student{key: sess.User() + "@" + host, name: sess.User() + " (" + host + ")"}
	}
	short := strings.TrimPrefix(fp, "SHA256:")
	if len(short) > 6 {
		short = short[:6]
	}
	return student{key: sess.User() + " " + fp, name: sess.User() + " (" + short + "…)", fp: fp}
}

// program is the session's model and what closes it.
func (s *Server) program(sess ssh.Session, who student) (tea.Model, func(), error) {
	r := sessionRenderer(sess)
	switch cmd := sess.Command(); {
	case isFollow(sess):
		if s.opts.Class == nil {
			return nil, nil, errors.New("nobody shares a lab on this server; ssh without \"follow\" opens a lab of your own")
		}
		var f *source.Follower
		var m *Model
		follow := func(key, name string) (tea.Model, error) {
			f = s.opts.Class.Follow(key, name)
			m = New(f, Options{Follow: true, Title: "The teacher's lab", Theme: s.opts.Theme, Renderer: r})
			return m, nil
		}
		closeAll := func() {
			if m != nil { // the program has ended: nothing sets them now
				m.Close()
				f.Close()
			}
		}
		if who.fp == "" {
			// No key: a name tells this student from others who log in
			// as the same user, maybe from behind the same address.
			why := []string{"You came in as " + sess.User() + " with the join code. Type your name: the teacher sees it,",
				"and your answer to each question counts once, however often you connect.",
				"Type the same name if you connect again."}
			return newAskName(r, sess.User(), why, func(name string) (tea.Model, error) {
				s.logf("named: %s from %s is %s", sess.User(), sess.RemoteAddr(), name)
				return follow(sess.User()+"/"+name, name+" · "+who.name)
			}), closeAll, nil
		}
		model, _ := follow(who.key, who.name)
		return model, closeAll, nil
	case len(cmd) == 0:
		var app *App
		logDir := ""
		open := func(dir string) (tea.Model, error) {
			var store *lessons.Store
			if s.opts.StateDir != "" {
				st, err := lessons.OpenStore(filepath.Join(s.opts.StateDir, "users", userDir(sess.User()), dir, "progress.json"))
				if err != nil {
					return nil, err
				}
				store = st
			}
			var err error
			if logDir, err = s.labDir(sess.User()); err != nil {
				return nil, err
			}
			a, err := NewApp(AppOptions{Lessons: s.opts.Lessons, Progress: store, Timing: s.opts.Timing,
				Sandbox: s.opts.Sandbox, Theme: s.opts.Theme, Renderer: r, NoChallenges: true, LogDir: logDir})
			if err != nil {
				s.dropLabDir(logDir)
				return nil, err
			}
			app = a
			return a, nil
		}
		var seat *source.Seat
		if s.opts.Class != nil {
			seat = s.opts.Class.Join(who.key, who.name)
		}
		var model tea.Model
		if who.fp == "" && s.opts.StateDir != "" {
			why := []string{"You came in as " + sess.User() + " with the join code. Type your name: your progress",
				"is kept under it, apart from anyone else's who logs in as " + sess.User() + ".",
				"Type the same name next time to carry on where you left off."}
			model = newAskName(r, sess.User(), why, func(name string) (tea.Model, error) {
				s.logf("named: %s from %s is %s", sess.User(), sess.RemoteAddr(), name)
				m, err := open("name-" + userDir(name))
				if err == nil && seat != nil {
					seat.Rename(name + " · " + who.name)
				}
				return m, err
			})
		} else {
			a, err := open(keyDir(who))
			if err != nil {
				if seat != nil {
					seat.Leave()
				}
				return nil, nil, err
			}
			model = a
		}
		return model, func() {
			if app != nil { // the program has ended: nothing sets it now
				app.Close()
				s.dropLabDir(logDir)
			}
			if seat != nil {
				seat.Leave()
			}
		}, nil
	default:
		return nil, nil, fmt.Errorf("unknown command %q: ssh with no command opens a lab of your own, ssh -t … %s follows the teacher's",
			strings.Join(cmd, " "), FollowCommand)
	}
}

// labDir makes the folder of a session's lab under LabsDir, named after
// its user so a teacher can tell them apart; "" without LabsDir.
func (s *Server) labDir(user string) (string, error) {
	if s.opts.LabsDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(s.opts.LabsDir, 0o755); err != nil {
		return "", fmt.Errorf("a folder for your lab's logs: %w", err)
	}
	dir, err := os.MkdirTemp(s.opts.LabsDir, userDir(user)+"-")
	if err != nil {
		return "", fmt.Errorf("a folder for your lab's logs: %w", err)
	}
	return dir, nil
}

// dropLabDir removes a session's lab folder once its lab has closed,
// unless the server keeps them.
func (s *Server) dropLabDir(dir string) {
	if dir != "" && !s.opts.KeepLabs {
		os.RemoveAll(dir)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// userDir is an SSH user name as a folder name: nothing that climbs out
// of the state folder or names another user's.
func userDir(user string) string {
	d := unsafeName.ReplaceAllString(user, "_")
	if d == "" || strings.Trim(d, ".") == "" {
		d = "_" + d
	}
	return d
}

// keyDir is the folder, inside the user's, of one person's progress: the
// key's fingerprint made safe for a file name.
func keyDir(who student) string {
	return userDir(strings.NewReplacer("/", "_", "+", "-", ":", "-").Replace(who.fp))
}

// sessionRenderer draws in the colours the session's terminal takes, as
// its TERM and COLORTERM say. It asks the terminal nothing: a client that
// never answers a query would hold the session up, since a read from an
// SSH channel cannot be cancelled. The background is taken as dark, as
// most terminals' are; the theme reads on either.
func sessionRenderer(sess ssh.Session) *lipgloss.Renderer {
	env := sess.Environ()
	if pty, _, ok := sess.Pty(); ok && pty.Term != "" {
		env = append(env, "TERM="+pty.Term)
	}
	r := lipgloss.NewRenderer(sess, termenv.WithEnvironment(sessionEnv(env)), termenv.WithUnsafe())
	r.SetHasDarkBackground(true)
	return r
}

// sessionEnv is a session's environment for termenv.
type sessionEnv []string

func (e sessionEnv) Environ() []string { return e }

func (e sessionEnv) Getenv(k string) string {
	v := ""
	for _, kv := range e { // the last one wins, as TERM from the pty is last
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}
