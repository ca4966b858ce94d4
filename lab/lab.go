package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/sqswire"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/timeline"
)

// Options configure a lab.
type Options struct {
	// Nodes is the size of the cluster New starts (default 3).
	Nodes int
	// Timing names the raft timing preset: "fast" (the default, for
	// scripts and tests) or "classroom" (the TUI's). The cluster command
	// uses it unless it says timing=.
	Timing string
	// TimelineSize is how many recent events Snapshot carries (default 200).
	TimelineSize int
	// Kafka, when set, puts the Kafka protocol on the nodes from the start,
	// as the kafka listen command does.
	Kafka *command.KafkaListen
	// SQS, when set, puts Amazon SQS's API on the nodes from the start, as
	// the sqs listen command does.
	SQS *command.SQSListen
	// LogDir is the folder the replicas write their partitions' segment
	// files to (LogDir/n2/orders-0/…), kept when the lab closes. Empty
	// means a new temporary folder, removed when the lab closes.
	LogDir string
}

// Lab is the world a learner drives: a broker cluster, its clients, a
// clock, a timeline and a checker, all driven by the command language.
// Its methods are safe to call from several goroutines: a TUI may kill a
// node while a lesson's wait is running.
type Lab struct {
	opts  Options
	clock *Clock
	tl    *timeline.Timeline

	logDir     string // where the cluster writes its segment files
	tempLogDir bool   // logDir is the lab's own, removed by Close

	swap  sync.Mutex  // serialises the cluster command
	hurry atomic.Bool // raft on the fast preset's timeouts (see Hurry)

	mu     sync.Mutex
	w      *world
	closed bool
	sqs    *sqswire.Config // the SQS listener's, kept across cluster commands; nil when not listening
}

// Errors callers branch on.
var (
	// ErrNotAvailable: the lab value does not apply to what it names (a
	// partition's mark of a queue). It parses; it cannot be read.
	ErrNotAvailable = errors.New("not available yet")
	// ErrClosed: the lab has been closed.
	ErrClosed = family.ErrClosed
	// ErrNeedsCheck: a condition reads a field of the checker's report,
	// which only a check (a drain of the cluster) can give.
	ErrNeedsCheck = errors.New("reading a checker field needs a check")
)

// ExpectationError is an expect whose condition did not hold, with the
// values it read.
type ExpectationError struct {
	Cond string // the condition as written
	Got  string // what the lab values were
}

func (e *ExpectationError) Error() string { return fmt.Sprintf("expect %s: %s", e.Cond, e.Got) }

// Result is what a command had to say. The same lines are in the timeline.
type Result struct {
	Command command.Command
	Lines   []string
	// Observed is, for an expect that held, the values it read: "lost is 0".
	Observed string
}

// New starts a lab with a cluster of opts.Nodes nodes.
func New(opts Options) (*Lab, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Timing == "" {
		opts.Timing = "fast"
	}
	if opts.TimelineSize <= 0 {
		opts.TimelineSize = 200
	}
	timing, err := broker.TimingByName(opts.Timing)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l := &Lab{opts: opts, clock: NewClock(), tl: timeline.New(opts.TimelineSize), logDir: opts.LogDir}
	if l.logDir == "" {
		if l.logDir, err = os.MkdirTemp("", "mqlab-logs-"); err != nil {
			return nil, fmt.Errorf("lab: a folder for the logs: %w", err)
		}
		l.tempLogDir = true
	}
	w, err := l.newWorld(opts.Nodes, timing)
	if err != nil {
		l.removeLogDir()
		return nil, fmt.Errorf("lab: %w", err)
	}
	l.w = w
	l.syncBroker(w) // the cluster's start is history before anyone subscribes
	var listens []command.Command
	if opts.Kafka != nil {
		listens = append(listens, *opts.Kafka)
	}
	if opts.SQS != nil {
		listens = append(listens, *opts.SQS)
	}
	for _, listen := range listens {
		if _, err := l.ExecCommand(context.Background(), listen); err != nil {
			l.Close()
			return nil, fmt.Errorf("lab: %w", err)
		}
	}
	return l, nil
}

// Close stops the generators and the cluster and waits for every goroutine
// the lab started; subscriptions are closed.
func (l *Lab) Close() error {
	l.swap.Lock()
	defer l.swap.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	w := l.w
	l.mu.Unlock()
	l.retire(w)
	l.tl.Close()
	l.removeLogDir()
	return nil
}

// LogDir is the folder where the replicas keep their partitions' segment
// files: LogDir/n2/orders-0/00000000000000000000.log and so on.
func (l *Lab) LogDir() string { return l.logDir }

func (l *Lab) removeLogDir() {
	if l.tempLogDir {
		os.RemoveAll(l.logDir)
	}
}

// Clock returns the lab's clock.
func (l *Lab) Clock() *Clock { return l.clock }

// Note puts text in the timeline as a note: what something driving the
// lab from outside its commands did, such as a challenge killing the
// learner's program.
func (l *Lab) Note(text string) {
	l.tl.Add(Event{Time: l.clock.Now(), Kind: EventNote, Text: text})
}

// LoseAcks loses every offset commit (and ack, and delete) the client
// sends until the returned function is called, and says through lost how
// many it has lost. A challenge kills a program whose commit after an
// effect was lost: however long the lab takes to act, the program's
// retries and later commits are lost too, so nothing it committed covers
// the effect. The timeline shows the arming and each loss.
func (l *Lab) LoseAcks(client string) (lost func() int, stop func(), err error) {
	w, err := l.world()
	if err != nil {
		return nil, nil, err
	}
	if err := w.cluster.LoseAcksFrom(client); err != nil {
		return nil, nil, err
	}
	l.syncBroker(w)
	return func() int { return w.cluster.LostAcks(client) }, func() { w.cluster.LetAcksThrough(client) }, nil
}

// HandedTogether says whether a Kafka client was handed offset and the
// one after it in one fetch. A program that has finished offset then
// holds the next record in the batch its poll returned, not only in its
// client's buffer, which a client drops when it learns its partitions
// have gone.
func (l *Lab) HandedTogether(client, topic string, partition int, offset int64) bool {
	w, err := l.world()
	if err != nil {
		return false
	}
	return w.kafka.HandedTogether(client, topic, partition, offset)
}

// Subscribe streams every timeline event from now on, Detail ones included.
// Close the subscription when done.
func (l *Lab) Subscribe(buffer int) *Subscription { return l.tl.Subscribe(buffer) }

// world returns the current world.
func (l *Lab) world() (*world, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	return l.w, nil
}

// retire takes a world out of service: its last broker events go into the
// timeline, later ones are ignored, and its cluster stops.
func (l *Lab) retire(w *world) {
	l.syncBroker(w)
	l.tl.Lock()
	w.retired = true
	l.tl.Unlock()
	w.close()
}

// Exec parses and runs one line. A command that cannot run (a typo, an
// unknown name, a bad value) returns an error and leaves the lab as it was.
// What a produce ends in — acknowledged, failed, unknown — is a result,
// not an error. An expect that does not hold returns *ExpectationError.
func (l *Lab) Exec(ctx context.Context, line string) (Result, error) {
	cmd, err := command.Parse(line)
	if err != nil {
		return Result{}, err
	}
	return l.ExecCommand(ctx, cmd)
}

// ExecCommand runs a parsed command.
func (l *Lab) ExecCommand(ctx context.Context, cmd command.Command) (Result, error) {
	return l.exec(ctx, cmd, 0)
}

func (l *Lab) exec(ctx context.Context, cmd command.Command, line int) (Result, error) {
	w, err := l.world()
	if err != nil {
		return Result{Command: cmd}, err
	}
	r := &run{l: l, w: w, line: line}
	err = r.dispatch(ctx, cmd)
	l.syncBroker(r.w)
	var ee *ExpectationError
	if err != nil && r.began && !errors.As(err, &ee) {
		l.tl.Add(Event{Time: l.clock.Now(), Kind: EventError, Text: err.Error()})
	}
	return Result{Command: cmd, Lines: r.lines, Observed: r.observed}, err
}

// run is one command's execution: it announces the command once it is
// known to be runnable, and collects what the command says.
type run struct {
	l        *Lab
	w        *world
	line     int
	lines    []string
	observed string // what an expect read
	began    bool
}

// begin puts the command in the timeline. Commands call it after checking
// everything that can be checked without acting, so that a command that
// cannot run leaves no trace.
func (r *run) begin(text string) {
	r.began = true
	r.l.syncBroker(r.w) // what the broker did before the command comes before it
	r.l.tl.Add(Event{Time: r.l.clock.Now(), Kind: EventCommand, Text: text, Line: r.line})
}

// act runs a broker action that checks its own preconditions. The command
// enters the timeline before the first broker event that comes after it,
// or when the action succeeds, and not at all when the action refuses
// before anything happened: like begin, it leaves no trace of a command
// that cannot run.
func (r *run) act(text string, do func() error) error {
	r.l.syncBroker(r.w)
	e := &Event{Time: r.l.clock.Now(), Kind: EventCommand, Text: text, Line: r.line}
	r.l.tl.Lock()
	r.w.pending = append(r.w.pending, e)
	r.l.tl.Unlock()
	err := do()
	r.l.tl.Lock()
	i := slices.Index(r.w.pending, e)
	if i >= 0 {
		r.w.pending = slices.Delete(r.w.pending, i, i+1)
	}
	r.began = i < 0 || err == nil // shown already, or shown now
	if i >= 0 && err == nil && !r.w.retired {
		r.l.tl.AddLocked(*e)
	}
	r.l.tl.Unlock()
	return err
}

// Begin and Say are begin and say for a family package (lab/family.Run).
func (r *run) Begin(text string) { r.begin(text) }

func (r *run) Say(kind EventKind, format string, args ...any) { r.say(kind, format, args...) }

func (r *run) say(kind EventKind, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.lines = append(r.lines, text)
	r.l.syncBroker(r.w)
	r.l.tl.Add(Event{Time: r.l.clock.Now(), Kind: kind, Text: text})
}

// dispatch sends each command to its handler; a family's commands go to
// its feature (features.go).
func (r *run) dispatch(ctx context.Context, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.Cluster:
		return r.cluster(c)
	case command.TopicCreate:
		return r.topicCreate(ctx, c)
	case command.Compact:
		return r.compact(ctx, c)
	case command.Produce:
		return r.produce(ctx, c)
	case command.Load:
		return r.load(ctx, c)
	case command.LoadStop:
		return r.w.loads.Stop(r, c)
	case command.Elect:
		return r.elect(ctx, c)
	case command.Kill:
		return r.kill(c)
	case command.Crash:
		return r.crash(c)
	case command.Restart:
		return r.restart(c)
	case command.Isolate:
		return r.isolate(c)
	case command.Partition:
		return r.partition(c)
	case command.Slow:
		return r.slow(c)
	case command.Heal:
		return r.heal()
	case command.DropReply:
		return r.drop(c.Client, "reply", c.String())
	case command.DropAck:
		return r.drop(c.Client, "ack", c.String())
	case command.Speed, command.Pause, command.Resume:
		return r.clockCommand(ctx, cmd)
	case command.Wait:
		return r.wait(ctx, c)
	case command.Expect:
		return r.expect(ctx, c)
	case command.Check:
		return r.check(ctx, c)
	case command.Help:
		return r.help(c)
	case command.LogFiles:
		return r.logFiles(c)
	case command.LogDump:
		return r.logDump(c)
	}
	if f, ok := features[cmd.Name()]; ok {
		return f.exec(ctx, r, cmd)
	}
	return fmt.Errorf("%s: the lab has no handler for this command", cmd.Name())
}

// LineError is a script line that failed: a command that could not run,
// a wait that timed out, or an expect that did not hold.
type LineError struct {
	Line int
	Text string // the line as written
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Expectation reports whether the line failed only because an expect did
// not hold (the script went on after it).
func (e *LineError) Expectation() bool {
	var ee *ExpectationError
	return errors.As(e.Err, &ee)
}

// RunScript runs parsed lines in order. An expect that does not hold is
// recorded and the script goes on; any other failure stops it. each, when
// not nil, is called after every line with what it said.
func (l *Lab) RunScript(ctx context.Context, lines []command.Line, each func(command.Line, Result, error)) []*LineError {
	var failed []*LineError
	for _, line := range lines {
		res, err := l.exec(ctx, line.Cmd, line.Num)
		if each != nil {
			each(line, res, err)
		}
		if err == nil {
			continue
		}
		le := &LineError{Line: line.Num, Text: line.Text, Err: err}
		failed = append(failed, le)
		if !le.Expectation() {
			break
		}
	}
	return failed
}

// ScriptError sums up the failed lines of a script, naming each.
func ScriptError(failed []*LineError) error {
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return failed[0]
	}
	nums := make([]string, len(failed))
	msgs := make([]string, len(failed))
	for i, f := range failed {
		nums[i] = strconv.Itoa(f.Line)
		msgs[i] = f.Error()
	}
	return fmt.Errorf("lines %s failed:\n%s", strings.Join(nums, ", "), strings.Join(msgs, "\n"))
}
