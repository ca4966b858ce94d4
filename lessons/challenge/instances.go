package challenge

// The runs of the learner's program: started with the challenge's
// environment, their standard output read a line at a time as what the
// program reports, killed and drained.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lessons/challenge/program"
)

// instance is one run of the learner's program.
type instance struct {
	n       int
	p       *program.Process
	zombie  bool          // paused and let go on after its group moved on
	killed  bool          // ended by the lab, not by itself
	started time.Time     // when the lab started it
	read    chan struct{} // closed once its standard output is all read
}

// runLine is a line of a run's standard output.
type runLine struct {
	run  int
	text string
}

// mostTries is the most failed attempts one run has reported at one record.
func (r *runner) mostTries() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	most := 0
	for _, n := range r.failures {
		most = max(most, n)
	}
	return most
}

// connectWithin is how long a run has to connect to the cluster.
func (r *runner) connectWithin() time.Duration {
	if r.opts.ConnectWithin > 0 {
		return r.opts.ConnectWithin
	}
	return 15 * time.Second
}

// kill ends the current run, takes what it wrote before it died, and
// starts the next run.
func (r *runner) kill(ctx context.Context, cur *instance, committed int) (*instance, error) {
	if err := r.end(cur, committed); err != nil {
		return nil, err
	}
	return r.startProgram(ctx)
}

// end kills a run and takes what it wrote before it died.
func (r *runner) end(cur *instance, committed int) error {
	done := "the group has committed " + counted(committed, "record", "records")
	if r.ch.Queue != "" {
		done = fmt.Sprintf("%d of the queue's messages %s deleted", committed, were(committed))
	}
	r.note("the lab kills run %d (SIGKILL to its process group): %s and the program has reported %s", cur.n, done, r.reportedText())
	r.mu.Lock()
	cur.killed = true
	r.kills++
	r.mu.Unlock()
	cur.p.Kill()
	if err := r.drain(cur); err != nil {
		return err
	}
	r.killedAt = r.reported()
	return nil
}

// drain takes the lines a killed run wrote before it died, and any the
// others write meanwhile.
func (r *runner) drain(p *instance) error {
	timeout := time.After(2 * time.Second) // something it started may hold the pipe; the group kill ends it
	for {
		select {
		case ln := <-r.lines:
			if _, err := r.processed(ln); err != nil {
				return err
			}
		case <-p.read:
			// Its last lines are queued before read closes.
			for {
				select {
				case ln := <-r.lines:
					if _, err := r.processed(ln); err != nil {
						return err
					}
				default:
					return nil
				}
			}
		case <-timeout:
			return nil
		}
	}
}

// clientID is the client id run n was given.
func (r *runner) clientID(n int) string { return r.ch.Group + "-" + strconv.Itoa(n) }

// startProgram starts another run of the learner's program, and hands its
// lines and its end to the loop.
func (r *runner) startProgram(ctx context.Context) (*instance, error) {
	r.mu.Lock()
	r.runs++
	n := r.runs
	r.mu.Unlock()
	env := []string{
		"MQLAB_BOOTSTRAP=" + r.bootstrap,
		"MQLAB_TOPIC=" + r.ch.Topic,
		"MQLAB_GROUP=" + r.ch.Group,
		"MQLAB_CLIENT_ID=" + r.clientID(n),
		"MQLAB_WORK_MS=" + strconv.Itoa(workMillis(r.ch)),
		"MQLAB_SESSION_MS=" + strconv.Itoa(sessionMS),
	}
	if r.ch.Queue != "" {
		env = []string{
			"MQLAB_SQS_ENDPOINT=" + r.bootstrap,
			"MQLAB_QUEUE=" + r.ch.Queue,
			"MQLAB_VISIBILITY_MS=" + strconv.FormatInt(r.ch.QueueVisibility.Milliseconds(), 10),
			"MQLAB_CLIENT_ID=" + r.clientID(n),
			"MQLAB_WORK_MS=" + strconv.Itoa(workMillis(r.ch)),
		}
	}
	if r.db != "" {
		env = append(env, "MQLAB_DB="+r.db)
	}
	if r.ch.DeadLetters != "" {
		env = append(env, "MQLAB_DEAD_LETTERS="+r.ch.DeadLetters)
	}
	p, err := program.Start(ctx, program.Spec{
		Name: fmt.Sprintf("run %d of the program", n),
		Args: r.opts.Command,
		Dir:  r.opts.Dir,
		Env:  env,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotGraded, err)
	}
	pr := &instance{n: n, p: p, read: make(chan struct{}), started: time.Now()}
	r.mu.Lock()
	r.live = append(r.live, pr)
	r.mu.Unlock()
	go func() {
		defer close(pr.read)
		for line := range p.Lines() {
			select {
			case r.lines <- runLine{run: n, text: line}:
			case <-r.stop:
				return
			}
		}
	}()
	// The end is told apart from the lines: something the program started
	// may hold its standard output open after it has exited.
	go func() {
		select {
		case <-p.Done():
		case <-r.stop:
			return
		}
		select {
		case r.exits <- pr:
		case <-r.stop:
		}
	}()
	r.note("run %d of the program starts (pid %d)", n, p.Pid())
	return pr, nil
}

// forget drops an ended run from the live ones.
func (r *runner) forget(p *instance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range r.live {
		if q == p {
			r.live = append(r.live[:i], r.live[i+1:]...)
			return
		}
	}
}

// failuresNoted is how many of a run's failed attempts at one record the
// timeline tells one by one.
const failuresNoted = 3

// processed takes one line of a run's standard output, and says whether
// it reports progress (a record finished) rather than a failed attempt.
func (r *runner) processed(ln runLine) (bool, error) {
	verb, key, _ := strings.Cut(strings.TrimSpace(ln.text), " ")
	key = strings.TrimSpace(key)
	if (verb != "processed" && verb != "failed") || key == "" || strings.ContainsAny(key, " \t") {
		return false, fmt.Errorf("%w: run %d wrote %q to standard output; it may write only lines \"processed KEY\" there, one per record it finished, and \"failed KEY\" for an attempt that failed, and log to standard error",
			ErrNotGraded, ln.run, clip(ln.text, 80))
	}
	run := "run " + strconv.Itoa(ln.run)
	r.mu.Lock()
	if verb == "failed" {
		r.rec.Failed[key] = append(r.rec.Failed[key], run)
		r.failures[run+" "+key]++
		n := r.failures[run+" "+key]
		r.mu.Unlock()
		if n <= failuresNoted {
			r.record("run %d reports failed %s", ln.run, key)
		} else if n == failuresNoted+1 {
			r.record("run %d goes on failing %s (the timeline leaves out the rest)", ln.run, key)
		}
		return false, nil
	}
	r.rec.Processed[key] = append(r.rec.Processed[key], run)
	r.mu.Unlock()
	r.record("run %d reports processed %s", ln.run, key)
	return true, nil
}

// reported is how many "processed" lines the program wrote; distinctReported
// how many different records they and its failures name.
func (r *runner) reported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, runs := range r.rec.Processed {
		n += len(runs)
	}
	return n
}

func (r *runner) distinctReported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.rec.Processed)
	for key := range r.rec.Failed {
		if len(r.rec.Processed[key]) == 0 {
			n++
		}
	}
	return n
}

// reportedText is what the program has reported, for a note: how many
// records it named, or, where keys repeat (in-order's accounts), how many
// it reported processed.
func (r *runner) reportedText() string {
	seen := map[string]bool{}
	for _, k := range r.rec.Keys {
		if seen[k] {
			return fmt.Sprintf("%d records processed", r.reported())
		}
		seen[k] = true
	}
	return strconv.Itoa(r.distinctReported())
}

func lastWords(p *program.Process) string {
	if p == nil {
		return "none"
	}
	if s := strings.TrimSpace(p.Stderr()); s != "" {
		return clip(s[max(0, len(s)-300):], 300)
	}
	return "nothing on standard error"
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
