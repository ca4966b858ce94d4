package lessons

// Challenges: the learner's own consumer, in any language and with any
// Kafka client, run against a live cluster under real faults and graded
// by what it did. The lab starts the cluster with the Kafka listener, runs
// the program (lab.StartProgram), sends the orders, kills the program at
// the worst moments a seeded schedule picks and starts it again, kills
// leaders under it, and grades what it reported doing.
//
// The program's side of the contract:
//   - its environment names the cluster (MQLAB_BOOTSTRAP), the topic
//     (MQLAB_TOPIC), its group (MQLAB_GROUP), its client id
//     (MQLAB_CLIENT_ID), the session timeout to ask its group for
//     (MQLAB_SESSION_MS) and how long each order's work takes
//     (MQLAB_WORK_MS: sleep that long, then report it);
//   - its standard output carries one line per order it finished,
//     "processed KEY", and nothing else (it logs to standard error);
//   - it runs until it is killed.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab"

	_ "modernc.org/sqlite" // the challenges' databases
)

// Challenge is one challenge: what it asks and how it grades.
type Challenge struct {
	ID      string
	Title   string
	Level   int    // 1 for the first; each builds on the ones before
	Summary string // one line for the list
	// Orders is how many orders the workload sends; Partitions, the
	// topic's partition count.
	Orders     int
	Partitions int
	// Schema, when set, is the SQLite database the challenge makes for the
	// program (its path in MQLAB_DB): the tables its effects go to.
	Schema string
	// Grade says what the program did wrong, given what it reported and
	// when and, for a challenge with a database, its rows; nil when
	// nothing.
	Grade func(r *ChallengeRecord) []Failure
}

// ChallengeOptions say how to run a challenge.
type ChallengeOptions struct {
	Command []string // the learner's program and its arguments
	Dir     string   // its working directory; "" for mqlab's
	Seed    uint64   // the fault schedule's seed
	// Limit bounds the run; 0 for 60 s.
	Limit time.Duration
}

// Verdict is how a run went.
type Verdict struct {
	Challenge string
	Seed      uint64
	Passed    bool
	Failures  []Failure
	Kills     int           // times the lab killed the program
	Took      time.Duration // wall time
	Timeline  []string      // what happened, in order, as the verdict tells it
}

// Failure is one thing the program did wrong, with the orders involved
// and what happened around them.
type Failure struct {
	What   string
	Orders []string
	Around []string // timeline lines near the first order's trouble
}

// ChallengeRecord is what a run saw: every "processed" line, the kills,
// and the timeline.
type ChallengeRecord struct {
	Orders    []string            // every order the workload sent, by key, in order
	Processed map[string][]string // key → the run ("run 2") of each time it was reported
	Timeline  []entry
	// DB is the path of the challenge's database, "" for none; Grade
	// reads the program's effects from it.
	DB string
}

type entry struct {
	at   time.Duration
	text string
}

// around returns the timeline near an order's trouble: the lines within
// half a second of the first that mentions it or, for an order never
// reported, the order before it; with none of those, of the first kill.
func (r *ChallengeRecord) around(key string) []string {
	i := slices.Index(r.Orders, key)
	for k := i; k >= 0; k-- {
		for _, e := range r.Timeline {
			if strings.HasSuffix(e.text, " "+r.Orders[k]) || strings.Contains(e.text, " "+r.Orders[k]+" ") {
				return r.near(e.at)
			}
		}
	}
	for _, e := range r.Timeline {
		if strings.HasPrefix(e.text, "the lab kills") {
			return r.near(e.at)
		}
	}
	return nil
}

// near is the timeline within half a second of at.
func (r *ChallengeRecord) near(at time.Duration) []string {
	var out []string
	for _, x := range r.Timeline {
		if x.at >= at-time.Second/2 && x.at <= at+time.Second/2 {
			out = append(out, fmt.Sprintf("%6.2fs  %s", x.at.Seconds(), x.text))
		}
	}
	return out
}

// ErrChallenge marks a run that could not grade the program: it did not
// start, exited at once, never connected, wrote garbage or did not finish.
var ErrChallenge = errors.New("the challenge could not grade the program")

// challengeWorkMS is how long each order's work takes the program, so
// that a kill can land between its effect and its commit.
const challengeWorkMS = 30

// challengeSessionMS is the session timeout the program should ask its
// group for: a killed run's partitions move to the next within about a
// second, not Kafka's default 45.
const challengeSessionMS = 500

// RunChallenge runs the learner's program against a fresh lab under the
// challenge's fault schedule for opts.Seed and grades it. An error wrapping
// ErrChallenge says what kept it from grading, in words for the learner.
func RunChallenge(ctx context.Context, ch *Challenge, opts ChallengeOptions) (Verdict, error) {
	start := time.Now()
	v := Verdict{Challenge: ch.ID, Seed: opts.Seed}
	limit := opts.Limit
	if limit == 0 {
		limit = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		return v, err
	}
	defer l.Close()
	for _, line := range []string{
		fmt.Sprintf("topic create orders partitions=%d", ch.Partitions),
		"kafka listen port=0 auto-create=false",
	} {
		if _, err := l.Exec(ctx, line); err != nil {
			return v, fmt.Errorf("setting up the lab: %s: %w", line, err)
		}
	}
	k := l.Snapshot().Kafka
	if k == nil {
		return v, errors.New("setting up the lab: the Kafka listener did not start")
	}
	var db string
	if ch.Schema != "" {
		dir, err := os.MkdirTemp("", "mqlab-challenge-")
		if err != nil {
			return v, err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, ch.ID+".db")
		if err := createDB(ctx, db, ch.Schema); err != nil {
			return v, fmt.Errorf("setting up the challenge's database: %w", err)
		}
	}
	run := &challengeRun{ch: ch, l: l, opts: opts, limit: limit, bootstrap: k.Bootstrap, start: start,
		rec: &ChallengeRecord{Processed: map[string][]string{}, DB: db},
		rng: rand.New(rand.NewPCG(opts.Seed, 0x6d716c6162))}
	for i := 1; i <= ch.Orders; i++ {
		run.rec.Orders = append(run.rec.Orders, "order-"+strconv.Itoa(i))
	}
	err = run.play(ctx)
	v.Kills, v.Took = run.kills, time.Since(start)
	for _, e := range run.rec.Timeline {
		v.Timeline = append(v.Timeline, fmt.Sprintf("%6.2fs  %s", e.at.Seconds(), e.text))
	}
	if err != nil {
		return v, err
	}
	v.Failures = ch.Grade(run.rec)
	v.Passed = len(v.Failures) == 0
	return v, nil
}

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
			committed, total := r.committed()
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
				committed, _ := r.committed()
				proc, err = r.kill(ctx, proc, committed)
				r.l.Exec(ctx, "slow "+t.slowed+" off") //nolint:errcheck // a node killed meanwhile has no latency to clear
				if err != nil {
					return err
				}
				started = time.Now()
			}
		case <-proc.Done():
			if exit := proc.Exit(); r.reported() == 0 && time.Since(started) < 3*time.Second {
				return fmt.Errorf("%w: the program exited at once (%s); a consumer runs until it is stopped", ErrChallenge, exit)
			} else {
				return fmt.Errorf("%w: the program ended on its own (%s); a consumer runs until it is stopped", ErrChallenge, exit)
			}
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
		committed, total := r.committed()
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
		if r.sent() == r.ch.Orders && committed == total && total >= r.ch.Orders && downNode == "" &&
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

// committed is the group's committed offsets, summed over the topic's
// partitions, and the records those partitions hold.
func (r *challengeRun) committed() (committed, total int) {
	snap := r.l.Snapshot()
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

// sent is how many orders the shop's load has sent.
func (r *challengeRun) sent() int {
	for _, ld := range r.l.Snapshot().Loads {
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

// Challenges lists the challenges, in the order they build on each other.
func Challenges() []*Challenge { return slices.Clone(challenges) }

// FindChallenge returns the challenge with id, or nil.
func FindChallenge(id string) *Challenge {
	for _, c := range challenges {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// createDB makes a challenge's database with its schema.
func createDB(ctx context.Context, path, schema string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, schema)
	return err
}

var challenges = []*Challenge{
	{
		ID: "at-least-once", Title: "At least once: every order processed, across crashes", Level: 1,
		Summary:    "commit only what you have done; a crash may repeat an order, never lose one",
		Orders:     30,
		Partitions: 2,
		Grade:      gradeNothingLost,
	},
	{
		ID: "effect-once", Title: "The effect once: charge each order exactly once", Level: 2,
		Summary:    "the redelivery at-least-once brings must not charge the buyer twice",
		Orders:     30,
		Partitions: 2,
		Schema: `CREATE TABLE charges (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	order_key TEXT NOT NULL,
	amount INTEGER NOT NULL
)`,
		Grade: gradeChargedOnce,
	},
}

// gradeChargedOnce fails every order the database charged more than once,
// and every order it never charged.
func gradeChargedOnce(r *ChallengeRecord) []Failure {
	db, err := sql.Open("sqlite", "file:"+r.DB+"?mode=ro")
	if err != nil {
		return []Failure{{What: "the challenge's database could not be read: " + err.Error()}}
	}
	defer db.Close()
	rows, err := db.Query(`SELECT order_key, count(*) FROM charges GROUP BY order_key`)
	if err != nil {
		return []Failure{{What: "the charges table could not be read: " + err.Error()}}
	}
	defer rows.Close()
	charged := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			return []Failure{{What: "the charges table could not be read: " + err.Error()}}
		}
		charged[key] = n
	}
	var twice, never []string
	for _, key := range r.Orders {
		switch n := charged[key]; {
		case n == 0:
			never = append(never, key)
		case n > 1:
			twice = append(twice, key)
		}
	}
	var out []Failure
	if len(twice) > 0 {
		out = append(out, Failure{
			What:   fmt.Sprintf("%d orders were charged more than once: each came again after a kill between its charge and its commit, and the charge was made again", len(twice)),
			Orders: twice,
			Around: r.around(twice[0]),
		})
	}
	if len(never) > 0 {
		out = append(out, Failure{
			What:   fmt.Sprintf("%d orders were never charged", len(never)),
			Orders: never,
			Around: r.around(never[0]),
		})
	}
	return out
}

// gradeNothingLost fails every order the workload sent that the program
// never reported processed.
func gradeNothingLost(r *ChallengeRecord) []Failure {
	var lost []string
	for _, key := range r.Orders {
		if len(r.Processed[key]) == 0 {
			lost = append(lost, key)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return []Failure{{
		What:   fmt.Sprintf("%d of %d orders were never processed: the group committed past them before the program finished them, and a crash in between lost them", len(lost), len(r.Orders)),
		Orders: lost,
		Around: r.around(lost[0]),
	}}
}
