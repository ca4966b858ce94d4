package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui"
	"github.com/mqlab/mqlab/tui/source"
)

type serveFlags struct {
	ssh, code, keys, timing, log string
	keep                         string // --keep-logs
	max                          int
	share, keepOwnLabs           bool
}

func serveCmd() *cobra.Command {
	var o serveFlags
	cmd := &cobra.Command{
		Use:   "serve --ssh ADDR",
		Short: "Serve mqlab over SSH to a class: a lab for each student, or the teacher's to follow",
		Long: `serve lets a class use mqlab with nothing but ssh. Every session gets the
lessons and a lab of its own, with its progress kept per SSH user. With
--share the teacher's own screen opens here and is shared: a student who
connects with the command "follow" sees it live, read-only, and answers
its questions on their own screen while the teacher's shows the tally.

Students get in with the join code as their password (one is made and
printed unless --code gives it) or with a key listed in --authorized-keys.
It listens on 127.0.0.1 unless ADDR names another host. Progress is kept
per SSH user and key, so two laptops that log in with one name keep
their own. Joins, leaves and refusals are logged: to standard error, or
with --share (whose screen is the terminal) to a file, or to --log FILE.

Quitting with students connected asks first; their sessions end with a
goodbye and their terminals as they were. With --keep-own-labs, quitting
the shared screen ends only the sessions that follow it: students with
labs of their own keep them until Ctrl-C stops the server.

Each student's lab writes its partitions' segment files to a folder of its
own under mqlab's state folder, removed when the session ends. With
--keep-logs DIR they are kept, each under DIR/sessions, and the teacher's
lab writes to DIR itself.`,
		Example: `  mqlab serve --ssh :2222 --share          # the teacher's screen here, shared
  ssh -p 2222 127.0.0.1                    # a student: a lab of their own
  ssh -t -p 2222 127.0.0.1 follow          # a student: the teacher's lab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.ssh, "ssh", "", "address to serve SSH on, HOST:PORT or :PORT (the host is 127.0.0.1 unless given)")
	fs.StringVar(&o.code, "code", "", "the join code students type as their password (default: one is made and printed)")
	fs.StringVar(&o.keys, "authorized-keys", "", "a file of public keys, as in ~/.ssh/authorized_keys, let in without the code")
	fs.IntVar(&o.max, "max-sessions", tui.DefaultMaxSessions, "most SSH sessions at once; each own-lab session runs a lab of three nodes")
	fs.BoolVar(&o.share, "share", false, "open the teacher's screen here and share it with students who connect with the command follow")
	fs.StringVar(&o.timing, "timing", "classroom", "raft timing preset for every lab: fast or classroom")
	fs.StringVar(&o.log, "log", "", "a file to log joins, leaves and refusals to (default: standard error; with --share, serve.log in mqlab's state folder)")
	fs.StringVar(&o.keep, "keep-logs", "", "keep the segment files: your lab's (with --share) in this folder, each student's lab's in a folder of its own under DIR/sessions; default: removed when each lab closes")
	fs.BoolVar(&o.keepOwnLabs, "keep-own-labs", false, "with --share: quitting your screen ends only the sessions that follow it; own labs stay until Ctrl-C")
	return cmd
}

func serve(cmd *cobra.Command, o serveFlags) error {
	if o.ssh == "" {
		return errors.New("serve needs --ssh ADDR, e.g. --ssh :2222: SSH is how mqlab serves a class")
	}
	if o.max < 1 {
		return fmt.Errorf("--max-sessions %d: want at least 1", o.max)
	}
	if o.keepOwnLabs && !o.share {
		return errors.New("--keep-own-labs is for --share: it says what quitting the shared screen does to labs of their own")
	}
	if o.share && !isTerminal(cmd.OutOrStdout()) {
		return errors.New("--share opens the teacher's screen here, and standard output is not a terminal: run it in one, or leave --share out to serve students only")
	}
	keep, err := keepLogsDir(o.keep)
	if err != nil {
		return err
	}
	progress, err := lessons.DefaultStorePath()
	if err != nil {
		return err
	}
	state := filepath.Dir(progress)
	// Each own-lab session's segment files: under the state folder, gone
	// when the session ends, or kept under --keep-logs.
	labs := filepath.Join(state, "ssh", "labs", strconv.Itoa(os.Getpid()))
	if keep != "" {
		labs = filepath.Join(keep, "sessions")
	} else {
		sweepLabs(filepath.Dir(labs))
		defer os.RemoveAll(labs)
	}
	var class *source.Class
	if o.share {
		class = source.NewClass()
	}
	var logw io.Writer = cmd.ErrOrStderr()
	logPath := o.log
	if logPath == "" && o.share {
		logPath = filepath.Join(state, "ssh", "serve.log")
	}
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log: %w", err)
		}
		defer f.Close()
		logw = f
	}
	srv, err := tui.NewServer(tui.ServeOptions{Addr: o.ssh, Code: o.code, AuthorizedKeys: o.keys, MaxSessions: o.max,
		HostKeyPath: filepath.Join(state, "ssh_host_ed25519"), StateDir: filepath.Join(state, "ssh"),
		LabsDir: labs, KeepLabs: keep != "", Timing: o.timing, Sandbox: sandboxSetup, Class: class, Log: logw})
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	banner := serveBanner(srv, o.share) + labsWord(labs, keep != "")
	if !o.share {
		fmt.Fprint(cmd.ErrOrStderr(), banner+"Ctrl-C stops the server.\n")
		ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		select {
		case <-ctx.Done():
		case err := <-served:
			return err
		}
		return srv.Close()
	}
	store, err := lessons.OpenStore("")
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "mqlab: your progress will not be kept: %v\n", err)
		store = nil
	}
	fmt.Fprint(cmd.ErrOrStderr(), banner)
	if logPath != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "Joins and refusals are logged to %s.\n", logPath)
	}
	appErr := tui.RunApp(tui.AppOptions{Progress: store, Timing: o.timing, Sandbox: sandboxSetup, Class: class, LogDir: keep,
		Notice: serveNotice(srv), ConfirmQuit: func() string { return srv.QuitQuestion(o.keepOwnLabs) }})
	if keep != "" {
		sayLogDir(cmd.ErrOrStderr(), keep, true)
	}
	if appErr == nil && o.keepOwnLabs {
		srv.End(tui.GoodbyeTeacherLeft, true)
		if all, _ := srv.Sessions(); all > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s still working in labs of their own; Ctrl-C stops the server and ends them.\n", students(all))
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			select {
			case <-ctx.Done():
			case err := <-served:
				return err
			}
		}
	}
	return errors.Join(appErr, srv.Close())
}

// sweepLabs removes the session folders a server that did not end
// cleanly left under dir: each server keeps its sessions' folders under
// its process id, so a folder whose process is gone is nobody's.
func sweepLabs(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// processAlive says whether a process with this id is running.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// labsWord says where the students' labs keep their segment files.
func labsWord(dir string, kept bool) string {
	if kept {
		return fmt.Sprintf("Each student's lab writes its segment files to a folder of its own in %s, kept.\n", dir)
	}
	return fmt.Sprintf("Each student's lab writes its segment files to a folder of its own in %s, removed when the session ends.\n", dir)
}

// students is "1 student" or "12 students".
func students(n int) string {
	if n == 1 {
		return "1 student"
	}
	return fmt.Sprintf("%d students", n)
}

// serveNotice is the banner in one line, for the teacher's lesson picker.
func serveNotice(srv *tui.Server) string {
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	code := "a listed key"
	if srv.Code() != "" {
		code = "code " + srv.Code()
	}
	return fmt.Sprintf("Students join with %s: ssh -p %s %s for a lab of their own, ssh -t -p %s %s %s for yours.",
		code, port, host, port, host, tui.FollowCommand)
}

// serveBanner tells the teacher how students get in.
func serveBanner(srv *tui.Server, share bool) string {
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	var b []byte
	w := func(format string, a ...any) { b = fmt.Appendf(b, format, a...) }
	w("mqlab serves on %s.", srv.Addr())
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		w(" Anyone who can reach it may try to join; the join code or a listed key is what keeps strangers out.")
	}
	w("\n")
	if srv.Code() != "" {
		w("Join code: %s (students type it as their password).\n", srv.Code())
	}
	w("A lab of their own: ssh -p %s %s\n", port, host)
	if share {
		w("Your lab, to follow: ssh -t -p %s %s %s\n", port, host, tui.FollowCommand)
	}
	return string(b)
}
