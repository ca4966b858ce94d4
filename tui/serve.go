package tui

// mqlab over SSH: every session gets the lesson picker and a lab of its
// own, or, with the command "follow", the teacher's shared lab read-only.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

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
	// Timing, Lessons, Sandbox and Theme are as in AppOptions, for every
	// session's own lab.
	Timing  string
	Lessons []*lessons.Lesson
	Sandbox []string
	Theme   *draw.Theme
	// Class is the teacher's shared lab that "follow" sessions watch; nil
	// when nobody shares one.
	Class *source.Class
}

// Server serves mqlab over SSH.
type Server struct {
	opts   ServeOptions
	srv    *ssh.Server
	ln     net.Listener
	code   string
	active atomic.Int64
	wg     sync.WaitGroup // the sessions' programs
}

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
	s := &Server{opts: opts, code: opts.Code}
	if s.code == "" && opts.AuthorizedKeys == "" {
		s.code = newJoinCode()
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
	if s.code != "" {
		sopts = append(sopts,
			wish.WithPasswordAuth(func(_ ssh.Context, pw string) bool { return s.codeOK(pw) }),
			wish.WithKeyboardInteractiveAuth(func(_ ssh.Context, ask gossh.KeyboardInteractiveChallenge) bool {
				answers, err := ask("", "mqlab: the join code your teacher gave.", []string{"join code: "}, []bool{false})
				return err == nil && len(answers) == 1 && s.codeOK(answers[0])
			}))
	}
	if opts.AuthorizedKeys != "" {
		sopts = append(sopts, wish.WithAuthorizedKeys(opts.AuthorizedKeys))
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

// Close ends every session and returns once their labs are closed.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.wg.Wait()
	return err
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
			wish.Fatalln(sess, "mqlab needs a terminal: ssh asks for one by itself, or with -t when you give a command (ssh -t … follow).")
			return
		}
		model, done, err := s.program(sess)
		if err != nil {
			wish.Fatalln(sess, "mqlab: "+err.Error())
			return
		}
		s.wg.Add(1)
		defer s.wg.Done()
		defer done()
		p := tea.NewProgram(model, append(bm.MakeOptions(sess), tea.WithAltScreen(), tea.WithMouseCellMotion())...)
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
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
		p.Run()
		p.Kill()
	}
}

// program is the session's model and what closes it.
func (s *Server) program(sess ssh.Session) (tea.Model, func(), error) {
	r := sessionRenderer(sess)
	switch cmd := sess.Command(); {
	case len(cmd) == 1 && cmd[0] == FollowCommand:
		if s.opts.Class == nil {
			return nil, nil, errors.New("nobody shares a lab on this server; ssh without \"follow\" opens a lab of your own")
		}
		f := s.opts.Class.Follow(sess.User() + "@" + sess.RemoteAddr().String())
		m := New(f, Options{Follow: true, Title: "The teacher's lab", Theme: s.opts.Theme, Renderer: r})
		return m, func() { m.Close(); f.Close() }, nil
	case len(cmd) == 0:
		var store *lessons.Store
		if s.opts.StateDir != "" {
			st, err := lessons.OpenStore(filepath.Join(s.opts.StateDir, "users", userDir(sess.User()), "progress.json"))
			if err != nil {
				return nil, nil, err
			}
			store = st
		}
		a, err := NewApp(AppOptions{Lessons: s.opts.Lessons, Progress: store, Timing: s.opts.Timing,
			Sandbox: s.opts.Sandbox, Theme: s.opts.Theme, Renderer: r})
		if err != nil {
			return nil, nil, err
		}
		return a, a.Close, nil
	default:
		return nil, nil, fmt.Errorf("unknown command %q: ssh with no command opens a lab of your own, ssh -t … %s follows the teacher's",
			strings.Join(cmd, " "), FollowCommand)
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
