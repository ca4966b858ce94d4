package lessons

// A challenge run in progress: the program's runs, the schedule's
// faults, and what the program reported.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// challengeRun is one run in progress.
type challengeRun struct {
	ch        *Challenge
	l         *lab.Lab
	opts      ChallengeOptions
	limit     time.Duration
	bootstrap string
	start     time.Time
	rng       *rand.Rand

	mu    sync.Mutex
	rec   *ChallengeRecord
	runs  int
	kills int
}

func (r *challengeRun) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Timeline = append(r.rec.Timeline, entry{at: time.Since(r.start), text: fmt.Sprintf(format, args...)})
}

// trigger is one fault of the schedule: once the program has reported
// after orders, the first moment cond holds, do it.
type trigger struct {
	after  int
	kind   string // "commit-ahead", "effect-ahead" or "leader"
	fired  bool
	slowed string // effect-ahead: the coordinator slowed for it, "" until then
}

// effectWindow is the latency the group's coordinator gets while an
// effect-ahead kill waits for its moment: a commit sent just after an
// effect is still on its way when the lab acts on the effect's line.
const effectWindow = 20 * time.Millisecond

// coordinator is the node coordinating group billing, or "".
func coordinator(snap lab.Snapshot) string {
	for _, g := range snap.Cluster.Groups {
		if g.Group == "billing" {
			return g.Coordinator
		}
	}
	return ""
}

// schedule draws the run's faults from its seed: a kill when the group's
// commit is ahead of the work (what an at-most-once consumer does), a kill
// between an effect and its commit, and a leader killed under the group.
func (r *challengeRun) schedule() []*trigger {
	n := r.ch.Orders
	var ts []*trigger
	for _, kind := range []string{"commit-ahead", "effect-ahead", "commit-ahead", "leader", "effect-ahead"} {
		ts = append(ts, &trigger{kind: kind, after: 1 + r.rng.IntN(max(1, n*3/4))})
	}
	return ts
}

// play runs the program until the group has committed every order, under
// the schedule, restarting it after each kill.
func (r *challengeRun) play(ctx context.Context) error {
	triggers := r.schedule()
	proc, err := r.startProgram(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if proc != nil {
			proc.Kill()
		}
	}()
	// The orders go out once the program has had a moment to join.
	go func() {
		time.Sleep(300 * time.Millisecond)
		r.l.Exec(ctx, fmt.Sprintf(`load orders rate=%d/s for=1s key=order-{n} value="order {n}" acks=all idempotent=true as=shop`, r.ch.Orders)) //nolint:errcheck // the finish waits for what it sent
		r.note("the shop starts sending %d orders over a second", r.ch.Orders)
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	started := time.Now()
	connected := false
	lastLine := time.Now()
	var downNode string
	var nodeDownAt time.Time
	for {
		select {
		case <-ctx.Done():
			committed, total := committedIn(r.l.Snapshot())
			return fmt.Errorf("%w: it did not finish within %v: the group committed %d of %d orders; the program's last words: %s",
				ErrChallenge, r.limit, committed, total, lastWords(proc))
		case line, ok := <-proc.Lines():
			if !ok {
				continue
			}
			if err := r.processed(line); err != nil {
				return err
			}
			lastLine = time.Now()
			// The line says the effect is made, and its commit is on its
			// way. The coordinator was slowed when the trigger came due,
			// so the commit is still travelling: it is lost, and the
			// program killed, the moment at-least-once repeats work.
			if t := due(triggers, "effect-ahead", r.reported()); t != nil && t.slowed != "" {
				t.fired = true
				r.l.Exec(ctx, "drop next ack from "+r.clientID()) //nolint:errcheck // a client that has not committed yet has nothing to lose
				committed, _ := committedIn(r.l.Snapshot())
				proc, err = r.kill(ctx, proc, committed)
				r.l.Exec(ctx, "slow "+t.slowed+" off") //nolint:errcheck // a node killed meanwhile has no latency to clear
				if err != nil {
					return err
				}
				started = time.Now()
			}
		case <-proc.Done():
			how := "ended on its own"
			if r.reported() == 0 && time.Since(started) < 3*time.Second {
				how = "exited at once"
			}
			return fmt.Errorf("%w: the program %s (%s); a consumer runs until it is stopped", ErrChallenge, how, proc.Exit())
		case <-tick.C:
		}
		snap := r.l.Snapshot()
		if !connected {
			if snap.Kafka != nil && len(snap.Kafka.Clients) > 0 {
				connected = true
			} else if time.Since(started) > 15*time.Second {
				return fmt.Errorf("%w: the program never connected to %s in 15 s; it should read the address from MQLAB_BOOTSTRAP", ErrChallenge, r.bootstrap)
			}
		}
		if downNode != "" && time.Since(nodeDownAt) > 500*time.Millisecond {
			r.l.Exec(ctx, "restart "+downNode) //nolint:errcheck // a node that cannot come back fails the finish
			r.note("%s restarted", downNode)
			downNode = ""
		}
		committed, total := committedIn(snap)
		reported := r.reported()
		for _, t := range triggers {
			if t.fired || reported < t.after {
				continue
			}
			switch t.kind {
			case "effect-ahead":
				if t.slowed == "" && downNode == "" {
					if node := coordinator(snap); node != "" {
						if _, err := r.l.Exec(ctx, "slow "+node+" "+effectWindow.String()); err == nil {
							t.slowed = node
						}
					}
				}
			case "commit-ahead":
				if committed <= r.distinctReported() {
					continue
				}
				t.fired = true
				if proc, err = r.kill(ctx, proc, committed); err != nil {
					return err
				}
				started = time.Now()
			case "leader":
				if downNode != "" {
					continue
				}
				lead := ""
				for _, p := range snap.Cluster.Topics {
					if p.Config.Name == "orders" && len(p.Partitions) > 0 {
						lead = p.Partitions[0].Leader
					}
				}
				if lead == "" {
					continue
				}
				t.fired = true
				if _, err := r.l.Exec(ctx, "kill "+lead); err == nil {
					downNode, nodeDownAt = lead, time.Now()
					r.note("%s, the leader of orders/0, killed", lead)
				}
			}
		}
		// Done once every order is committed and the program has been
		// quiet for a while: what it finishes after its commit counts.
		if sent(snap) == r.ch.Orders && committed == total && total >= r.ch.Orders && downNode == "" &&
			time.Since(lastLine) > quietEnd {
			r.note("the group has committed all %d orders", total)
			return nil
		}
	}
}

// due is the first trigger of kind not fired yet whose turn has come.
func due(ts []*trigger, kind string, reported int) *trigger {
	for _, t := range ts {
		if t.kind == kind && !t.fired && reported >= t.after {
			return t
		}
	}
	return nil
}

// kill ends the program's run, takes what it wrote before it died, and
// starts the next run.
func (r *challengeRun) kill(ctx context.Context, proc *lab.Process, committed int) (*lab.Process, error) {
	r.note("the lab kills run %d (SIGKILL to its process group): the group has committed %d orders and the program has reported %d", r.runs, committed, r.distinctReported())
	proc.Kill()
	r.kills++
	if err := r.drain(proc); err != nil {
		return nil, err
	}
	return r.startProgram(ctx)
}

// quietEnd is how long the program must have reported nothing before a
// run with every order committed ends.
const quietEnd = 10 * challengeWorkMS * time.Millisecond

// drain takes the lines a killed run wrote before it died.
func (r *challengeRun) drain(p *lab.Process) error {
	for {
		select {
		case line, ok := <-p.Lines():
			if !ok {
				return nil
			}
			if err := r.processed(line); err != nil {
				return err
			}
		case <-time.After(2 * time.Second):
			return nil // something it started holds the pipe; the group kill ends it
		}
	}
}

// clientID is the client id the current run was given.
func (r *challengeRun) clientID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "billing-" + strconv.Itoa(r.runs)
}

// startProgram starts another run of the learner's program.
func (r *challengeRun) startProgram(ctx context.Context) (*lab.Process, error) {
	r.mu.Lock()
	r.runs++
	n := r.runs
	r.mu.Unlock()
	p, err := lab.StartProgram(ctx, lab.ProgramSpec{
		Name: fmt.Sprintf("run %d of the program", n),
		Args: r.opts.Command,
		Dir:  r.opts.Dir,
		Env: []string{
			"MQLAB_BOOTSTRAP=" + r.bootstrap,
			"MQLAB_TOPIC=orders",
			"MQLAB_GROUP=billing",
			"MQLAB_CLIENT_ID=billing-" + strconv.Itoa(n),
			"MQLAB_WORK_MS=" + strconv.Itoa(challengeWorkMS),
			"MQLAB_SESSION_MS=" + strconv.Itoa(challengeSessionMS),
			"MQLAB_DB=" + r.rec.DB,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrChallenge, err)
	}
	r.note("run %d of the program starts (pid %d)", n, p.Pid())
	return p, nil
}

// processed takes one line of the program's standard output.
func (r *challengeRun) processed(line string) error {
	key, ok := strings.CutPrefix(strings.TrimSpace(line), "processed ")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.ContainsAny(key, " \t") {
		return fmt.Errorf("%w: run %d wrote %q to standard output; it may write only lines \"processed KEY\" there, one per order it finished, and log to standard error",
			ErrChallenge, r.runs, clip(line, 80))
	}
	r.mu.Lock()
	r.rec.Processed[key] = append(r.rec.Processed[key], "run "+strconv.Itoa(r.runs))
	r.mu.Unlock()
	r.note("run %d reports processed %s", r.runs, key)
	return nil
}

// reported is how many "processed" lines the program wrote; distinctReported
// how many different orders they name.
func (r *challengeRun) reported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, runs := range r.rec.Processed {
		n += len(runs)
	}
	return n
}

func (r *challengeRun) distinctReported() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rec.Processed)
}

// committedIn is the group's committed offsets in snap, summed over the
// topic's partitions, and the records those partitions hold.
func committedIn(snap lab.Snapshot) (committed, total int) {
	for _, g := range snap.Cluster.Groups {
		if g.Group != "billing" {
			continue
		}
		for _, p := range g.Partitions {
			if p.Topic != "orders" {
				continue
			}
			if p.Committed > 0 {
				committed += int(p.Committed)
			}
			total += int(p.HighWatermark)
		}
	}
	return committed, total
}

// sent is how many orders the shop's load has sent, once it has stopped.
func sent(snap lab.Snapshot) int {
	for _, ld := range snap.Loads {
		if ld.Client == "shop" && ld.State == lab.LoadStopped {
			return ld.Sent
		}
	}
	return 0
}

func lastWords(p *lab.Process) string {
	if p == nil {
		return "none"
	}
	if s := strings.TrimSpace(p.Stderr()); s != "" {
		return clip(s[max(0, len(s)-300):], 300)
	}
	return "nothing on standard error"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
