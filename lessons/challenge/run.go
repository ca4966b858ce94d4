package challenge

// A challenge run in progress: what it holds, the shop that sends its
// records, and the checker's pass at the end. Its loop is in
// play.go.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// runner is one run of a challenge in progress.
type runner struct {
	ch        *Challenge
	l         *lab.Lab
	opts      Options
	limit     time.Duration
	bootstrap string
	start     time.Time
	rng       *rand.Rand
	db        string

	lines chan runLine   // every run's standard output, as it comes
	exits chan *instance // runs that ended
	stop  chan struct{}  // closed when the run is over

	mu       sync.Mutex
	rec      *Record
	runs     int
	kills    int
	sentAll  bool           // the shop is done
	failures map[string]int // "run N KEY" → its failed attempts
	live     []*instance    // runs not ended yet
	checked  string         // the checker's counts that are not zero
	// held is how many records at the end of rec.Sent the shop holds
	// back until release is closed; see holdLastBack.
	held     int
	release  chan struct{}
	released bool
	holding  bool // the shop is waiting for release
	// idlePause says why the schedule's pause tested nothing: no run
	// could be paused, or the paused run was let go on before any other
	// had taken its place (with what its group was doing then). A pass
	// is then not graded.
	idlePause string
	// silentZombie says why the paused run, let go on, may have tested
	// nothing: it said nothing before it ended or was given up on. A line
	// from it later clears it.
	silentZombie string
	// killedAt is how many lines the program had reported at the last
	// kill: a commit-ahead kill waits for the next run to report, so that
	// it is the run's own commit that ran ahead.
	killedAt int
}

// note puts what the lab did in the run's timeline, and in the lab's,
// where a screen watching the run shows it.
func (r *runner) note(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.record("%s", text)
	r.l.Note(text)
}

// record puts what the program reported in the run's timeline only: the
// screen shows its work in the group's offsets.
func (r *runner) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Timeline = append(r.rec.Timeline, entry{at: time.Since(r.start), text: fmt.Sprintf(format, args...)})
}

// shop sends the workload's records one by one, spread over a second;
// the records it holds back wait for the release.
func (r *runner) shop(ctx context.Context) {
	n := len(r.rec.Sent)
	if r.ch.Queue != "" {
		r.note("the shop starts sending %d jobs to the queue %s over a second", n, r.ch.Queue)
	} else if r.held == 0 {
		r.note("the shop starts sending %d records to %s over a second", n, r.ch.Topic)
	} else {
		r.note("the shop starts sending %d of its %d records to %s over a second, holding back each key's last record until a run is paused: what a paused run holds, newer records follow", n-r.held, n, r.ch.Topic)
	}
	every := time.Second / time.Duration(n)
	began := time.Now()
	for i, rec := range r.rec.Sent {
		if i == n-r.held {
			r.mu.Lock()
			r.holding = true
			r.mu.Unlock()
			select {
			case <-r.release:
			case <-r.stop:
				return
			}
			r.note("the shop sends the %d records it held back", r.held)
			began = time.Now().Add(-time.Duration(i) * every)
		}
		select {
		case <-time.After(time.Until(began.Add(time.Duration(i) * every))):
		case <-r.stop:
			return
		}
		// The shop's producer is idempotent and retries through a
		// leader's death; a record it gave up on is missing from the
		// log, and the finish waits for the log's records, not the shop's.
		line := fmt.Sprintf(`produce %s key=%s value="%s" acks=all idempotent=true as=shop`, r.ch.Topic, rec.Key, rec.Value)
		if r.ch.Queue != "" {
			line = fmt.Sprintf(`send %s key=%s value="%s" as=shop`, r.ch.Queue, rec.Key, rec.Key)
		}
		r.l.Exec(ctx, line) //nolint:errcheck // see above
	}
	r.mu.Lock()
	r.sentAll = true
	r.mu.Unlock()
}

// releaseHeld lets the shop send the records it holds back.
func (r *runner) releaseHeld() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held > 0 && !r.released {
		r.released = true
		close(r.release)
	}
}

// shopHolding says whether the shop has sent all but the records it holds
// back and waits for the release.
func (r *runner) shopHolding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holding && !r.released
}

// holdLastBack moves each key's last record to the end of sent, keeping
// each key's records in their order, and says how many it moved. A run
// paused before those are sent cannot be holding any key's last record,
// so whatever it writes when it goes on, the key has a newer write.
func holdLastBack(sent []ShopRecord) ([]ShopRecord, int) {
	last := map[string]int{}
	for i, s := range sent {
		last[s.Key] = i
	}
	var head, tail []ShopRecord
	for i, s := range sent {
		if last[s.Key] == i {
			tail = append(tail, s)
		} else {
			head = append(head, s)
		}
	}
	return append(head, tail...), len(tail)
}

func (r *runner) shopDone() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sentAll
}

// stallEnd is how long a challenge that grades stalls waits without
// progress, once the shop is done, before it ends the run and grades it.
// A quiet client may be waiting out its own fetch's long poll (kafkajs and
// franz-go wait up to 5 s) before it rejoins, so it is generous; a run
// seen retrying one record over and over is ended after retryStall.
const (
	stallEnd     = 15 * time.Second
	retryStall   = 2 * time.Second
	endlessTries = 4 * poisonTries
)

// check runs the lab's checker over the run: every record the shop was
// told was written must be in the log, or the run grades nothing (the
// fault would be the lab's, not the program's). Its counts, of what the
// group received among them, end the timeline.
func (r *runner) check(ctx context.Context) error {
	rep, err := r.l.Check(ctx)
	if err != nil {
		return fmt.Errorf("checking the lab at the end: %w", err)
	}
	var counts []string
	for _, f := range strings.Fields(rep.Summary()) {
		if !strings.HasSuffix(f, "=0") {
			counts = append(counts, f)
		}
	}
	r.checked = strings.Join(counts, " ")
	r.note("the checker: %s", r.checked)
	if rep.Lost > 0 {
		return fmt.Errorf("%w: the lab lost %d records the shop was told were written, which is the broker's fault, not your program's: please report it with this seed", ErrNotGraded, rep.Lost)
	}
	return nil
}

// pausedQuiet is how long a run with a paused program must be quiet
// before it ends without every record committed.
const pausedQuiet = 2 * time.Second

// committedIn is the group's committed offsets in snap, summed over the
// topic's partitions, and the records those partitions hold.
//
// For a work queue's challenge, they are the messages deleted and the
// messages the queue was sent.
func (r *runner) committedIn(snap lab.Snapshot) (committed, total int) {
	if r.ch.Queue != "" {
		for _, q := range snap.Cluster.Queues {
			if q.Config.Name == r.ch.Queue {
				return int(q.Counts.Acked), int(q.Counts.Sent)
			}
		}
		return 0, 0
	}
	r.eachGroupPartition(snap, func(_ int, next, hwm int64) {
		committed += int(next)
		total += int(hwm)
	})
	return committed, total
}

// eachGroupPartition calls fn with each of the topic's partitions as the
// challenge's group sees it in snap: the group's committed offset (0 for
// none) and the partition's high-water mark.
func (r *runner) eachGroupPartition(snap lab.Snapshot, fn func(partition int, committed, hwm int64)) {
	for _, g := range snap.Cluster.Groups {
		if g.Group != r.ch.Group {
			continue
		}
		for _, p := range g.Partitions {
			if p.Topic == r.ch.Topic {
				fn(p.Partition, max(p.Committed, 0), p.HighWatermark)
			}
		}
	}
}

// queueSettle is how long a work queue's run goes on once every job was
// reported processed, for the messages still in the queue to be deleted,
// before it ends and grades what was done.
const queueSettle = 3 * time.Second

// quietEnd is how long the program must have reported nothing before a
// run with every record committed ends.
const quietEnd = 10 * workMS * time.Millisecond
