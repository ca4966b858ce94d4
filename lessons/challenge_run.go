package lessons

// A challenge run in progress: the loop that watches the program and the
// lab, fires the schedule's faults, and ends the run; and the shop.

import (
	"context"
	"fmt"
	"math/rand/v2"
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
	db        string

	lines chan runLine  // every run's standard output, as it comes
	exits chan *program // runs that ended
	stop  chan struct{} // closed when the run is over

	mu       sync.Mutex
	rec      *ChallengeRecord
	runs     int
	kills    int
	sentAll  bool           // the shop is done
	failures map[string]int // "run N KEY" → its failed attempts
	live     []*program     // runs not ended yet
	checked  string         // the checker's counts that are not zero
	// held is how many records at the end of rec.Sent the shop holds
	// back until release is closed; see holdLastBack.
	held     int
	release  chan struct{}
	released bool
	holding  bool // the shop is waiting for release
	// killedAt is how many lines the program had reported at the last
	// kill: a commit-ahead kill waits for the next run to report, so that
	// it is the run's own commit that ran ahead.
	killedAt int
}

// note puts what the lab did in the run's timeline, and in the lab's,
// where a screen watching the run shows it.
func (r *challengeRun) note(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	r.record("%s", text)
	r.l.Note(text)
}

// record puts what the program reported in the run's timeline only: the
// screen shows its work in the group's offsets.
func (r *challengeRun) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Timeline = append(r.rec.Timeline, entry{at: time.Since(r.start), text: fmt.Sprintf(format, args...)})
}

// shop sends the workload's records one by one, spread over a second;
// the records it holds back wait for the release.
func (r *challengeRun) shop(ctx context.Context) {
	n := len(r.rec.Sent)
	if r.held == 0 {
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
		r.l.Exec(ctx, fmt.Sprintf(`produce %s key=%s value="%s" acks=all idempotent=true as=shop`, r.ch.Topic, rec.Key, rec.Value)) //nolint:errcheck // see above
	}
	r.mu.Lock()
	r.sentAll = true
	r.mu.Unlock()
}

// releaseHeld lets the shop send the records it holds back.
func (r *challengeRun) releaseHeld() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held > 0 && !r.released {
		r.released = true
		close(r.release)
	}
}

// shopHolding says whether the shop has sent all but the records it holds
// back and waits for the release.
func (r *challengeRun) shopHolding() bool {
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

func (r *challengeRun) shopDone() bool {
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

// play runs the program until its group has committed every record, under
// the schedule, restarting it after each kill.
func (r *challengeRun) play(ctx context.Context) error {
	triggers := r.schedule()
	cur, err := r.startProgram(ctx)
	if err != nil {
		return err
	}
	shopped := make(chan struct{})
	shopCtx, stopShop := context.WithCancel(ctx)
	defer func() {
		close(r.stop)
		stopShop()
		r.mu.Lock()
		live := r.live
		r.mu.Unlock()
		for _, p := range live {
			p.p.Kill()
		}
		<-shopped // its notes are in the timeline before the verdict reads it
	}()
	go func() {
		defer close(shopped)
		r.shop(shopCtx)
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	connected := false
	lastLine, lastProgress := time.Now(), time.Now()
	lastCommitted := 0
	var downNode string
	var nodeDownAt time.Time
	var paused *program
	var pausedAt, resumedAt time.Time
	for {
		select {
		case <-ctx.Done():
			committed, total := r.committedIn(r.l.Snapshot())
			return fmt.Errorf("%w: it did not finish within %v: the group committed %d of %d records; the program's last words: %s",
				ErrChallenge, r.limit, committed, total, lastWords(cur.p))
		case ln := <-r.lines:
			progress, err := r.processed(ln)
			if err != nil {
				return err
			}
			lastLine = time.Now()
			if progress {
				lastProgress = lastLine
			}
			if ln.run != cur.n {
				break
			}
			// The line says the effect is made, and its commit is on its
			// way. The coordinator was slowed when the trigger came due,
			// so the commit is still travelling: it is lost, and the
			// program killed, the moment at-least-once repeats work.
			if t := due(triggers, FaultEffectAhead, r.reported()); t != nil && t.slowed != "" {
				t.fired = true
				r.l.Exec(ctx, "drop next ack from "+r.clientID(cur.n)) //nolint:errcheck // a client that has not committed yet has nothing to lose
				committed, _ := r.committedIn(r.l.Snapshot())
				cur, err = r.kill(ctx, cur, committed)
				r.l.Exec(ctx, "slow "+t.slowed+" off") //nolint:errcheck // a node killed meanwhile has no latency to clear
				if err != nil {
					return err
				}
				break
			}
			// A pause lands in the middle of the next record's work, with
			// records still waiting behind it.
			if t := due(triggers, FaultPause, r.reported()); t != nil && paused == nil && downNode == "" {
				// Two records at least are waiting: the one in hand, and
				// one behind it.
				committed, total := r.committedIn(r.l.Snapshot())
				if total-committed < 2 {
					break
				}
				t.fired = true
				time.Sleep(challengeWorkMS * time.Millisecond / 3)
				if err := cur.p.Pause(); err != nil {
					return fmt.Errorf("%w: pausing run %d: %v", ErrChallenge, cur.n, err)
				}
				paused, pausedAt = cur, time.Now()
				r.note("the lab pauses run %d (SIGSTOP) in the middle of its work, as a long garbage-collection pause would: it sends nothing, not even heartbeats, and its session runs out", cur.n)
				r.releaseHeld()
				if cur, err = r.startProgram(ctx); err != nil {
					return err
				}
			}
		case p := <-r.exits:
			r.mu.Lock()
			killed, zombie := p.killed, p.zombie
			r.mu.Unlock()
			r.forget(p)
			switch {
			case killed:
			case p != cur:
				r.note("run %d ended on its own (%s)", p.n, firstLine(p.p.Exit()))
				if !zombie {
					return fmt.Errorf("%w: run %d ended on its own (%s); a consumer runs until it is stopped", ErrChallenge, p.n, p.p.Exit())
				}
			default:
				how := "ended on its own"
				if r.reported() == 0 && time.Since(p.started) < 3*time.Second {
					how = "exited at once"
				}
				return fmt.Errorf("%w: the program %s (%s); a consumer runs until it is stopped", ErrChallenge, how, p.p.Exit())
			}
		case <-tick.C:
		}
		snap := r.l.Snapshot()
		if !connected {
			if snap.Kafka != nil && len(snap.Kafka.Clients) > 0 {
				connected = true
			} else if within := r.connectWithin(); time.Since(cur.started) > within {
				return fmt.Errorf("%w: the program never connected to %s in %v; it should read the address from MQLAB_BOOTSTRAP", ErrChallenge, r.bootstrap, within)
			}
		}
		if downNode != "" && time.Since(nodeDownAt) > 500*time.Millisecond {
			r.l.Exec(ctx, "restart "+downNode) //nolint:errcheck // a node that cannot come back fails the finish
			r.note("%s restarted", downNode)
			downNode = ""
		}
		committed, total := r.committedIn(snap)
		if committed < lastCommitted && paused != nil && paused.zombie {
			r.note("the group's commits went back from %d to %d records: run %d committed the old records it held, as Kafka lets a member that has rejoined do", lastCommitted, committed, paused.n)
		}
		if committed != lastCommitted {
			lastCommitted, lastProgress = committed, time.Now()
		}
		// A shop holding records back for a pause that cannot come now
		// (the group has read all there is) sends them, and the pause is
		// dropped: it would find the run holding nothing.
		if paused == nil && committed == total && r.shopHolding() {
			for _, t := range triggers {
				if t.kind == FaultPause {
					t.fired = true
				}
			}
			r.note("the group has read all the shop sent before a run was paused: the pause is dropped")
			r.releaseHeld()
		}
		allDone := r.shopDone() && committed == total && total >= len(r.rec.Sent)
		// The paused run goes on once the group has finished without it
		// (or has long given up waiting for that).
		if paused != nil && !paused.zombie && (allDone || time.Since(pausedAt) > 10*time.Second) {
			if err := paused.p.Resume(); err != nil {
				return fmt.Errorf("%w: resuming run %d: %v", ErrChallenge, paused.n, err)
			}
			r.mu.Lock()
			paused.zombie = true
			r.mu.Unlock()
			resumedAt = time.Now()
			r.note("the lab lets run %d go on (SIGCONT) after %.1f s: it still holds the records it fetched before the pause, though its group has given its partitions to run %d", paused.n, time.Since(pausedAt).Seconds(), cur.n)
		}
		reported := r.reported()
		for _, t := range triggers {
			if t.fired || reported < t.after {
				continue
			}
			switch t.kind {
			case FaultEffectAhead:
				if t.slowed == "" && downNode == "" {
					if node := r.coordinator(snap); node != "" {
						if _, err := r.l.Exec(ctx, "slow "+node+" "+effectWindow.String()); err == nil {
							t.slowed = node
						}
					}
				}
			case FaultCommitAhead:
				if committed <= r.distinctReported() || reported <= r.killedAt {
					continue
				}
				t.fired = true
				if cur, err = r.kill(ctx, cur, committed); err != nil {
					return err
				}
			case FaultLeader:
				if downNode != "" {
					continue
				}
				lead := ""
				for _, p := range snap.Cluster.Topics {
					if p.Config.Name == r.ch.Topic && len(p.Partitions) > 0 {
						lead = p.Partitions[0].Leader
					}
				}
				if lead == "" {
					continue
				}
				t.fired = true
				if _, err := r.l.Exec(ctx, "kill "+lead); err == nil {
					downNode, nodeDownAt = lead, time.Now()
					r.note("%s, the leader of %s/0, killed", lead, r.ch.Topic)
				}
			}
		}
		// Done once every record is committed and the program has been
		// quiet for a while: what it finishes after its commit counts, and
		// so does what a paused run does once it goes on.
		settled := r.shopDone() && downNode == "" &&
			(paused == nil || paused.zombie && time.Since(resumedAt) > time.Second)
		if allDone && settled && time.Since(lastLine) > quietEnd {
			r.note("the group has committed all %d records", total)
			return nil
		}
		// A run let go on after a pause may commit old offsets over newer
		// ones, and its group then stays behind with nothing left to read:
		// once all is quiet, what was written is graded.
		if paused != nil && settled && time.Since(lastLine) > pausedQuiet && time.Since(lastProgress) > pausedQuiet {
			r.note("all is quiet, with the group's commits at %d of %d records", committed, total)
			return nil
		}
		stuck := time.Since(lastProgress)
		if r.ch.GradeStalls && settled &&
			(stuck > stallEnd || stuck > retryStall && r.mostTries() >= endlessTries) {
			r.note("the group has been stuck at %d of %d records committed for %.1f s, with nothing processed: the lab ends the run", committed, total, stuck.Seconds())
			r.mu.Lock()
			r.rec.Stalled = true
			r.mu.Unlock()
			return nil
		}
	}
}

// check runs the lab's checker over the run: every record the shop was
// told was written must be in the log, or the run grades nothing (the
// fault would be the lab's, not the program's). Its counts, of what the
// group received among them, end the timeline.
func (r *challengeRun) check(ctx context.Context) error {
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
		return fmt.Errorf("%w: the lab lost %d records the shop was told were written, which is the broker's fault, not your program's: please report it with this seed", ErrChallenge, rep.Lost)
	}
	return nil
}

// pausedQuiet is how long a run with a paused program must be quiet
// before it ends without every record committed.
const pausedQuiet = 2 * time.Second

// committedIn is the group's committed offsets in snap, summed over the
// topic's partitions, and the records those partitions hold.
func (r *challengeRun) committedIn(snap lab.Snapshot) (committed, total int) {
	for _, g := range snap.Cluster.Groups {
		if g.Group != r.ch.Group {
			continue
		}
		for _, p := range g.Partitions {
			if p.Topic != r.ch.Topic {
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

// quietEnd is how long the program must have reported nothing before a
// run with every record committed ends.
const quietEnd = 10 * challengeWorkMS * time.Millisecond
