// Package challenge holds mqlab's challenges: the learner's own consumer,
// in any language and with any Kafka client (or, for sqs-once, any SQS
// client), run against a live cluster
// under real faults and graded by what it did. The lab starts the cluster
// with the Kafka listener, runs the program (program.Start), sends the
// orders, kills the program at the worst moments a seeded schedule picks
// and starts it again, kills leaders under it, and grades what it reported
// doing. Each challenge's folder here (at-least-once/…) holds its page,
// README.md, its starters in Go and Python, and their solutions in
// testdata/.
//
// The program's side of the contract, for a topic's challenge:
//   - its environment names the cluster (MQLAB_BOOTSTRAP), the topic
//     (MQLAB_TOPIC), its group (MQLAB_GROUP), its client id
//     (MQLAB_CLIENT_ID), the session timeout to ask its group for
//     (MQLAB_SESSION_MS) and how long each order's work takes
//     (MQLAB_WORK_MS: sleep that long, then report it); for a challenge
//     with a database, its SQLite file (MQLAB_DB), and with a dead-letter
//     topic, its name (MQLAB_DEAD_LETTERS);
//   - its standard output carries one line per order it finished,
//     "processed KEY", one per attempt that failed, "failed KEY", and
//     nothing else (it logs to standard error);
//   - it runs until it is killed.
//
// A work queue's challenge (sqs-once) names instead the SQS endpoint
// (MQLAB_SQS_ENDPOINT), the queue (MQLAB_QUEUE) and its visibility timeout
// in milliseconds (MQLAB_VISIBILITY_MS); the rest is the same.
package challenge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// Challenge is one challenge: what it asks and how it grades.
type Challenge struct {
	ID      string
	Title   string
	Level   int    // 1 for the first; each builds on the ones before
	Summary string // one line for the list
	// Topic is the topic the shop writes to and Group the group the
	// program consumes it in; Partitions, the topic's partition count.
	Topic      string
	Group      string
	Partitions int
	// Workload makes the records the shop sends, in order, from the run's
	// seeded source.
	Workload func(rng *rand.Rand) []ShopRecord
	// Faults are the kinds of fault the schedule draws (FaultCommitAhead…),
	// one each, at moments drawn from the seed.
	Faults []string
	// Schema, when set, is the SQLite database the challenge makes for the
	// program (its path in MQLAB_DB): the tables its effects go to.
	Schema string
	// DeadLetters, when set, is a topic the lab creates for the program to
	// park records in (its name in MQLAB_DEAD_LETTERS).
	DeadLetters string
	// GradeStalls ends a run that makes no progress for a while once the
	// shop is done, and grades it, rather than waiting for the limit: a
	// program stuck on one record is what the challenge fails.
	GradeStalls bool
	// Queue, when set, makes this a work queue's challenge rather than a
	// topic's: the lab creates the queue with QueueVisibility, the shop
	// sends each record's key as a message's body, the program works the
	// queue through the SQS API, and the run is done once every message is
	// deleted. Topic, Group and Partitions then go unused.
	Queue           string
	QueueVisibility time.Duration
	// WorkMS, when set, is how long each record's work takes the program
	// (MQLAB_WORK_MS); 0 for workMS.
	WorkMS int
	// Grade says what the program did wrong, given what it reported and
	// when and, for a challenge with a database, its rows; nil when
	// nothing.
	Grade func(r *Record) []Failure
}

// ShopRecord is one record the shop sends: its key and its value.
type ShopRecord struct{ Key, Value string }

// Options say how to run a challenge.
type Options struct {
	Command []string // the learner's program and its arguments
	Dir     string   // its working directory; "" for mqlab's
	Seed    uint64   // the fault schedule's seed
	// Limit bounds the run; 0 for 60 s.
	Limit time.Duration
	// ConnectWithin is how long the program has to connect; 0 for 15 s,
	// time for an interpreter and its client library to load.
	ConnectWithin time.Duration
	// Watch, when set, is handed the challenge's lab once it is up, before
	// the program starts, to show it on a screen. The function it returns
	// is called with the outcome once the run is graded, and the lab stays
	// up until it returns.
	Watch func(l *lab.Lab) (release func(Verdict, error))
	// LogDir, when set, is the folder the lab writes its segment files
	// to, kept when it closes (see lab.Options).
	LogDir string
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
	// Checker is the lab's checker's counts that are not zero, over the
	// shop's records and what the group received of them:
	// "confirmed=30 duplicate_deliveries=4".
	Checker string
}

// Failure is one thing the program did wrong, with the orders involved
// and what happened around them.
type Failure struct {
	What   string
	Kind   string   // what Items are, plural: "orders", "writes"
	Items  []string // each record or write involved
	Around []string // timeline lines near the first item's trouble
}

// Record is what a run saw: every line the program reported,
// the kills, and the timeline.
type Record struct {
	Start     time.Time
	Sent      []ShopRecord        // every record the shop sent, in order
	Keys      []string            // their keys, in order
	Processed map[string][]string // key → the run ("run 2") of each time it was reported processed
	Failed    map[string][]string // key → the run of each attempt reported failed
	Timeline  []entry
	// Stalled says the run ended because the group made no progress.
	Stalled bool
	// DB is the path of the challenge's database, "" for none; Grade
	// reads the program's effects from it.
	DB string
	// DeadLettered is what the dead-letter topic held at the end.
	DeadLettered []lab.TopicRecord
	// Undeleted is, for a work queue's challenge, the messages its queue
	// still held at the end: "job-12, received 9 times".
	Undeleted []string
	// Between are the kills that landed right after the first commit
	// naming an order (FaultBetweenWrites).
	Between []betweenKill
}

type entry struct {
	at   time.Duration
	text string
}

// around returns the timeline near an order's trouble: the lines within
// half a second of the first that mentions it or, for an order never
// reported, the order before it; with none of those, of the first kill.
func (r *Record) around(key string) []string {
	i := slices.Index(r.Keys, key)
	for k := i; k >= 0; k-- {
		for _, e := range r.Timeline {
			if strings.HasSuffix(e.text, " "+r.Keys[k]) || strings.Contains(e.text, " "+r.Keys[k]+" ") {
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
func (r *Record) near(at time.Duration) []string {
	var out []string
	for _, x := range r.Timeline {
		if x.at >= at-time.Second/2 && x.at <= at+time.Second/2 {
			out = append(out, fmt.Sprintf("%6.2fs  %s", x.at.Seconds(), x.text))
		}
	}
	return out
}

// PassSchedules is how many schedules in a row a program must pass for
// progress to count its challenge passed: a buggy program can pass one
// lucky schedule.
const PassSchedules = 3

// ErrNotGraded marks a run that could not grade the program: it did not
// start, exited at once, never connected, wrote garbage or did not finish.
var ErrNotGraded = errors.New("the challenge could not grade the program")

// ErrIdlePause is a run ErrNotGraded because its schedule's pause tested
// nothing: no run could be paused, or no other run took the paused
// run's place before it went on.
var ErrIdlePause = errors.New("the pause tested nothing")

// workMS is how long each order's work takes the program, so
// that a kill can land between its effect and its commit.
const workMS = 30

// sessionMS is the session timeout the program should ask its
// group for: a killed run's partitions move to the next within about a
// second, not Kafka's default 45.
const sessionMS = 500

// Run runs the learner's program against a fresh lab under the
// challenge's fault schedule for opts.Seed and grades it. An error wrapping
// ErrNotGraded says what kept it from grading, in words for the learner.
func Run(ctx context.Context, ch *Challenge, opts Options) (v Verdict, err error) {
	start := time.Now()
	v = Verdict{Challenge: ch.ID, Seed: opts.Seed}
	limit := opts.Limit
	if limit == 0 {
		limit = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	l, bootstrap, err := startLab(ctx, ch, opts.LogDir)
	if err != nil {
		return v, err
	}
	defer l.Close()
	if opts.Watch != nil {
		release := opts.Watch(l)
		defer func() { release(v, err) }() // before the lab closes
	}
	var db string
	if ch.Schema != "" {
		dir, err := os.MkdirTemp("", "mqlab-challenge-")
		if err != nil {
			return v, err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, ch.ID+".db")
		if err := setUpDB(ctx, l, ch, db, opts.Watch != nil); err != nil {
			return v, fmt.Errorf("setting up the challenge's database: %w", err)
		}
	}
	run := newRunner(ch, l, opts, limit, bootstrap, start, db)
	err = run.play(ctx)
	if err == nil {
		err = run.check(ctx)
	}
	if err == nil && ch.DeadLetters != "" {
		if run.rec.DeadLettered, err = l.ReadTopic(ctx, ch.DeadLetters); err != nil {
			err = fmt.Errorf("reading %s at the end: %w", ch.DeadLetters, err)
		}
	}
	if err == nil && ch.Queue != "" {
		run.rec.Undeleted = undeleted(l.Snapshot(), ch.Queue)
	}
	v.Kills, v.Took, v.Checker = run.kills, time.Since(start), run.checked
	for _, e := range run.rec.Timeline {
		v.Timeline = append(v.Timeline, fmt.Sprintf("%6.2fs  %s", e.at.Seconds(), e.text))
	}
	if err != nil {
		return v, err
	}
	v.Failures = ch.Grade(run.rec)
	v.Passed = len(v.Failures) == 0
	idle := cmp.Or(run.idlePause, run.silentZombie)
	if v.Passed && idle != "" {
		// The schedule's pause was meant to leave a run holding old
		// records while another took over; that did not happen.
		return v, fmt.Errorf("%w: %w: %s; the program's pass is not graded: run the seed again", ErrNotGraded, ErrIdlePause, idle)
	}
	return v, nil
}

// startLab starts the challenge's lab: its topics and the Kafka listener
// the program connects to, whose bootstrap address it returns.
func startLab(ctx context.Context, ch *Challenge, logDir string) (*lab.Lab, string, error) {
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast", LogDir: logDir})
	if err != nil {
		return nil, "", err
	}
	if ch.Queue != "" {
		return startQueueLab(ctx, l, ch)
	}
	setup := []string{fmt.Sprintf("topic create %s partitions=%d", ch.Topic, ch.Partitions)}
	if ch.DeadLetters != "" {
		setup = append(setup, "topic create "+ch.DeadLetters+" partitions=1")
	}
	setup = append(setup, "kafka listen port=0 auto-create=false")
	for _, line := range setup {
		if _, err := l.Exec(ctx, line); err != nil {
			l.Close()
			return nil, "", fmt.Errorf("setting up the lab: %s: %w", line, err)
		}
	}
	k := l.Snapshot().Kafka
	if k == nil {
		l.Close()
		return nil, "", errors.New("setting up the lab: the Kafka listener did not start")
	}
	return l, k.Bootstrap, nil
}

// startQueueLab readies a work queue's challenge in l: its queue and the
// SQS listener the program talks to, whose endpoint (n1's) it returns.
func startQueueLab(ctx context.Context, l *lab.Lab, ch *Challenge) (*lab.Lab, string, error) {
	for _, line := range []string{
		fmt.Sprintf("queue create %s visibility=%dms", ch.Queue, ch.QueueVisibility.Milliseconds()),
		"sqs listen port=0",
	} {
		if _, err := l.Exec(ctx, line); err != nil {
			l.Close()
			return nil, "", fmt.Errorf("setting up the lab: %s: %w", line, err)
		}
	}
	s := l.Snapshot().SQS
	if s == nil {
		l.Close()
		return nil, "", errors.New("setting up the lab: the SQS listener did not start")
	}
	return l, s.Endpoint, nil
}

// undeleted is each message queue holds in snap, with how often it was
// received.
func undeleted(snap lab.Snapshot, queue string) []string {
	var out []string
	for _, q := range snap.Cluster.Queues {
		if q.Config.Name != queue {
			continue
		}
		for _, m := range q.Messages {
			out = append(out, fmt.Sprintf("%s, received %d times", m.Body, m.ReceiveCount))
		}
	}
	return out
}

// workMillis is how long each record's work takes ch's program.
func workMillis(ch *Challenge) int {
	if ch.WorkMS > 0 {
		return ch.WorkMS
	}
	return workMS
}

// setUpDB makes the challenge's database at path and, for a watched run,
// shows it on the lab's screen as the program's effects are made.
func setUpDB(ctx context.Context, l *lab.Lab, ch *Challenge, path string, watched bool) error {
	if err := createDB(ctx, path, ch.Schema); err != nil {
		return err
	}
	if watched {
		return l.AttachDatabase(ch.Group, path, "your program's database (MQLAB_DB)")
	}
	return nil
}

// newRunner readies a run: the workload drawn from the seed, each key's
// last record held back for a challenge that pauses the program.
func newRunner(ch *Challenge, l *lab.Lab, opts Options, limit time.Duration, bootstrap string, start time.Time, db string) *runner {
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6d716c6162))
	run := &runner{ch: ch, l: l, opts: opts, limit: limit, bootstrap: bootstrap, start: start, rng: rng, db: db,
		lines: make(chan runLine, 256), exits: make(chan *instance, 4), stop: make(chan struct{}), failures: map[string]int{},
		rec: &Record{Start: start, Processed: map[string][]string{}, Failed: map[string][]string{}, DB: db}}
	run.rec.Sent = ch.Workload(rng)
	if slices.Contains(ch.Faults, FaultPause) {
		run.rec.Sent, run.held = holdLastBack(run.rec.Sent)
		run.release = make(chan struct{})
	}
	for _, s := range run.rec.Sent {
		run.rec.Keys = append(run.rec.Keys, s.Key)
	}
	return run
}
