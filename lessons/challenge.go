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
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
