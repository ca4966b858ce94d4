package challenge

// The loop of a challenge run: each turn takes what the programs printed
// or that one ended, then looks at the lab, fires the faults that are due,
// and says whether the run is over.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab"
)

// player is what the loop knows between its turns.
type player struct {
	*runner
	triggers []*trigger
	cur      *instance // the run the group is meant to have now

	connected     bool      // a client has reached the cluster
	lastLine      time.Time // the last line any run printed
	lastProgress  time.Time // the last line that was progress, or commit that moved
	lastCommitted int       // the group's commits at the last turn

	downNode   string // the leader the lab killed, until it restarts it
	nodeDownAt time.Time

	paused              *instance // the run the lab paused, once it has
	pausedAt, resumedAt time.Time
	// pauseSure says the group's commit moved after the line the pause
	// followed, so that what the run was found to hold is what it had
	// not finished (see settleCommit); heldOn is the partitions it held
	// records on.
	pauseSure     bool
	heldOn        []int
	unsureTries   int       // pauses given up for want of a commit after the line
	replaced      bool      // a run other than the paused one has processed a record since
	spokeAt       time.Time // the paused run's first line since it went on; zero: none
	zombieEnded   bool      // it has ended since it went on
	zombieEndedAt time.Time
	zombieSilent  bool // it was given up on: zombieWake passed with neither

	watch *dbWatch // the database watched for the between-writes fault

	// allReportedAt is when every job of a work queue's challenge had
	// been reported processed; zero until then.
	allReportedAt time.Time
}

// play runs the program until its group has committed every record, under
// the schedule, restarting it after each kill.
func (r *runner) play(ctx context.Context) (err error) {
	pl := &player{runner: r, triggers: r.schedule(), lastLine: time.Now(), lastProgress: time.Now()}
	if pl.cur, err = r.startProgram(ctx); err != nil {
		return err
	}
	shopped := make(chan struct{})
	shopCtx, stopShop := context.WithCancel(ctx)
	defer func() {
		if pl.watch != nil {
			pl.watch.close()
		}
		close(r.stop)
		stopShop()
		r.mu.Lock()
		live := r.live
		r.mu.Unlock()
		for _, p := range live {
			p.p.Kill()
		}
		// What a run wrote before the lab ended it counts, as when a fault
		// kills one: a busy machine may read its last report only now.
		for _, p := range live {
			if derr := r.drain(p); err == nil && derr != nil {
				err = derr
			}
		}
		<-shopped // its notes are in the timeline before the verdict reads it
	}()
	go func() {
		defer close(shopped)
		r.shop(shopCtx)
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			committed, total := r.committedIn(r.l.Snapshot())
			return fmt.Errorf("%w: it did not finish within %v: the group committed %d of %d records; the program's last words: %s",
				ErrNotGraded, r.limit, committed, total, lastWords(pl.cur.p))
		case ln := <-r.lines:
			err = pl.line(ctx, ln)
		case p := <-r.exits:
			err = pl.exited(p)
		case c := <-pl.caught():
			err = pl.between(ctx, c)
		case <-tick.C:
		}
		if err != nil {
			return err
		}
		if over, err := pl.turn(ctx); over || err != nil {
			return err
		}
	}
}

// line takes a line a run printed, and fires the faults that wait for
// the current run's next line.
func (pl *player) line(ctx context.Context, ln runLine) error {
	progress, err := pl.processed(ln)
	if err != nil {
		return err
	}
	pl.lastLine = time.Now()
	if progress {
		pl.lastProgress = pl.lastLine
	}
	switch {
	case pl.paused == nil:
	case pl.paused.zombie && ln.run == pl.paused.n && pl.spokeAt.IsZero():
		pl.spokeAt = time.Now()
		pl.mu.Lock()
		pl.silentZombie = "" // it has said something after all
		pl.mu.Unlock()
	case !pl.paused.zombie && ln.run != pl.paused.n && progress:
		pl.replaced = true
	}
	if ln.run != pl.cur.n {
		return nil
	}
	if t := due(pl.triggers, FaultPause, pl.reported()); t != nil && pl.paused == nil && pl.downNode == "" {
		return pl.pause(ctx, t)
	}
	return nil
}

// effectAhead kills the current run once a commit it sent is lost. The
// lab loses every commit the run sends from the moment the fault came
// due, so whatever the run did before that commit, and after it, is not
// committed when the run dies: at-least-once does it again.
func (pl *player) effectAhead(ctx context.Context, t *trigger) error {
	client := pl.clientID(pl.cur.n)
	if t.losing != client {
		if t.stop != nil {
			t.stop() // a run killed meanwhile: its client is gone
		}
		lost, stop, err := pl.l.LoseAcks(client)
		if err != nil {
			return fmt.Errorf("losing run %d's commits: %w", pl.cur.n, err)
		}
		t.losing, t.lost, t.stop = client, lost, stop
		return nil
	}
	n := t.lost()
	if n == 0 {
		return nil
	}
	t.fired = true
	pl.note("run %d sent %s that the lab lost on the way to the group's coordinator: nothing it did since its last commit that arrived is committed", pl.cur.n, counted(n, "commit", "commits"))
	committed, _ := pl.committedIn(pl.l.Snapshot())
	var err error
	pl.cur, err = pl.kill(ctx, pl.cur, committed)
	t.stop()
	return err
}

// exited takes a run that ended: one the lab killed, or a paused one
// let go on, may end; any other ends the challenge.
func (pl *player) exited(p *instance) error {
	pl.mu.Lock()
	killed, zombie := p.killed, p.zombie
	pl.mu.Unlock()
	pl.forget(p)
	switch {
	case killed:
		return nil
	case p != pl.cur:
		pl.note("run %d ended on its own (%s)", p.n, firstLine(p.p.Exit()))
		if zombie {
			pl.zombieEnded, pl.zombieEndedAt = true, time.Now()
			return nil
		}
		return fmt.Errorf("%w: run %d ended on its own (%s); a consumer runs until it is stopped", ErrNotGraded, p.n, p.p.Exit())
	default:
		how := "ended on its own"
		if pl.reported() == 0 && time.Since(p.started) < 3*time.Second {
			how = "exited at once"
		}
		return fmt.Errorf("%w: the program %s (%s); a consumer runs until it is stopped", ErrNotGraded, how, p.p.Exit())
	}
}

// turn looks at the lab: a program that never connects, a node to bring
// back, the group's commits, the records held back, a paused run to let
// go on, the faults due, and whether the run is over.
func (pl *player) turn(ctx context.Context) (over bool, err error) {
	snap := pl.l.Snapshot()
	if !pl.connected {
		if snap.Kafka != nil && len(snap.Kafka.Clients) > 0 || snap.SQS != nil && len(snap.SQS.Clients) > 0 {
			pl.connected = true
		} else if within := pl.connectWithin(); time.Since(pl.cur.started) > within {
			from := "MQLAB_BOOTSTRAP"
			if pl.ch.Queue != "" {
				from = "MQLAB_SQS_ENDPOINT"
			}
			return false, fmt.Errorf("%w: the program never connected to %s in %v; it should read the address from %s; its last words: %s", ErrNotGraded, pl.bootstrap, within, from, lastWords(pl.cur.p))
		}
	}
	if pl.downNode != "" && time.Since(pl.nodeDownAt) > 500*time.Millisecond {
		pl.l.Exec(ctx, "restart "+pl.downNode) //nolint:errcheck // a node that cannot come back fails the finish
		pl.note("%s restarted", pl.downNode)
		pl.downNode = ""
	}
	committed, total := pl.committedIn(snap)
	if committed < pl.lastCommitted && pl.paused != nil && pl.paused.zombie {
		pl.note("the group's commits went back from %d to %d records: run %d committed the old records it held, as Kafka lets a member that has rejoined do", pl.lastCommitted, committed, pl.paused.n)
	}
	if committed != pl.lastCommitted {
		pl.lastCommitted, pl.lastProgress = committed, time.Now()
	}
	// A shop holding records back for a pause that cannot come now (the
	// group has read all there is) sends them, and the pause is dropped:
	// it would find the run holding nothing.
	if pl.paused == nil && committed == total && total >= len(pl.rec.Sent)-pl.held && pl.shopHolding() {
		for _, t := range pl.triggers {
			if t.kind == FaultPause {
				t.fired = true
			}
		}
		pl.note("the group has read all the shop sent before a run was paused: the pause is dropped")
		pl.mu.Lock()
		pl.idlePause = "the group read all the shop sent before a run could be paused, so no run was"
		pl.mu.Unlock()
		pl.releaseHeld()
	}
	allDone := pl.shopDone() && committed == total && total >= len(pl.rec.Sent)
	// The paused run goes on once the group has finished without it (or
	// has long given up waiting for that).
	if pl.paused != nil && !pl.paused.zombie && (allDone || time.Since(pl.pausedAt) > 10*time.Second) {
		if err := pl.resume(snap, allDone); err != nil {
			return false, err
		}
	}
	if err := pl.fire(ctx, snap, committed); err != nil {
		return false, err
	}
	return pl.ended(allDone, committed, total), nil
}

// fire fires the faults due that wait on the lab, not on a line: it loses
// the run's commits and kills it once one is lost, kills a run whose group
// has committed more than it reported, and kills the topic's first leader.
func (pl *player) fire(ctx context.Context, snap lab.Snapshot, committed int) error {
	reported := pl.reported()
	for _, t := range pl.triggers {
		if t.fired || reported < t.after {
			continue
		}
		switch t.kind {
		case FaultEffectAhead:
			if err := pl.effectAhead(ctx, t); err != nil {
				return err
			}
		case FaultCommitAhead:
			if committed <= pl.distinctReported() || reported <= pl.killedAt {
				continue
			}
			t.fired = true
			var err error
			if pl.cur, err = pl.kill(ctx, pl.cur, committed); err != nil {
				return err
			}
		case FaultBetweenWrites:
			if err := pl.watchBetween(ctx, t); err != nil {
				return err
			}
		case FaultLeader:
			if pl.downNode != "" {
				continue
			}
			lead := pl.firstLeader(snap)
			if lead == "" {
				continue
			}
			t.fired = true
			if _, err := pl.l.Exec(ctx, "kill "+lead); err != nil {
				// Without the kill the schedule tests less than it says.
				return fmt.Errorf("%w: killing the leader %s: %v", ErrNotGraded, lead, err)
			}
			pl.downNode, pl.nodeDownAt = lead, time.Now()
			if pl.ch.Queue != "" {
				pl.note("%s, the leader of the queue %s, killed: the other nodes answer for the queue once a new leader is chosen, and requests to %s itself are refused until it restarts", lead, pl.ch.Queue, lead)
			} else {
				pl.note("%s, the leader of %s/0, killed", lead, pl.ch.Topic)
			}
		}
	}
	return nil
}

// firstLeader is the leader of the topic's first partition in snap, or "".
// For a work queue's challenge, it is the queue's leader.
func (pl *player) firstLeader(snap lab.Snapshot) string {
	if pl.ch.Queue != "" {
		for _, q := range snap.Cluster.Queues {
			if q.Config.Name == pl.ch.Queue {
				return q.Leader
			}
		}
		return ""
	}
	for _, p := range snap.Cluster.Topics {
		if p.Config.Name == pl.ch.Topic && len(p.Partitions) > 0 {
			return p.Partitions[0].Leader
		}
	}
	return ""
}

// ended says whether the run is over, and notes why: every record
// committed and the program quiet; a paused run gone on and all quiet;
// or, where stalls are graded, the group stuck.
func (pl *player) ended(allDone bool, committed, total int) bool {
	// What the program finishes after its commit counts, and so does what
	// a paused run does once it goes on.
	settled := pl.shopDone() && pl.downNode == "" && (pl.paused == nil || pl.zombieSettled())
	if !settled {
		return false
	}
	if allDone && time.Since(pl.lastLine) > quietEnd {
		if pl.ch.Queue != "" {
			pl.note("all %d of the queue's messages are deleted", total)
		} else {
			pl.note("the group has committed all %d records", total)
		}
		return true
	}
	// A run let go on after a pause may commit old offsets over newer
	// ones, and its group then stays behind with nothing left to read:
	// once all is quiet, what was written is graded.
	if pl.paused != nil && time.Since(pl.lastLine) > pausedQuiet && time.Since(pl.lastProgress) > pausedQuiet {
		pl.note("all is quiet, with the group's commits at %d of %d records", committed, total)
		return true
	}
	if pl.ch.Queue != "" && pl.distinctReported() >= len(pl.rec.Keys) {
		if pl.allReportedAt.IsZero() {
			pl.allReportedAt = time.Now()
		} else if time.Since(pl.allReportedAt) > queueSettle {
			pl.note("every job was reported processed %.1f s ago, yet %d of the queue's %d messages are not deleted: a delete with the receipt handle of an earlier receive deletes nothing once the message was received again; the lab ends the run",
				time.Since(pl.allReportedAt).Seconds(), total-committed, total)
			return true
		}
	}
	stuck := time.Since(pl.lastProgress)
	if pl.ch.GradeStalls && (stuck > stallEnd || stuck > retryStall && pl.mostTries() >= endlessTries) {
		pl.note("the group has been stuck at %d of %d records committed for %.1f s, with nothing processed: the lab ends the run", committed, total, stuck.Seconds())
		pl.mu.Lock()
		pl.rec.Stalled = true
		pl.mu.Unlock()
		return true
	}
	return false
}

// watchBetween watches the database for the current run's first commit
// that names a new order; a watch on a run that has ended gives way to one
// on the run after it.
func (pl *player) watchBetween(ctx context.Context, t *trigger) error {
	if pl.db == "" {
		t.fired = true
		return nil
	}
	if pl.watch != nil && pl.watch.run == pl.cur {
		return nil
	}
	if pl.watch != nil {
		pl.watch.close()
		pl.watch = nil
	}
	w, err := pl.watchDB(ctx, pl.cur)
	if err != nil {
		return fmt.Errorf("watching the program's database: %w", err)
	}
	pl.watch = w
	return nil
}

// caught delivers the run the database watch stopped; nil while none
// watches.
func (pl *player) caught() <-chan dbCatch {
	if pl.watch == nil {
		return nil
	}
	return pl.watch.caught
}

// between kills a run the watch stopped right after the first commit that
// named a new order, and records where the kill landed once the run is
// dead and nothing more can be committed.
func (pl *player) between(ctx context.Context, c dbCatch) error {
	w := pl.watch
	pl.watch = nil
	defer w.close()
	if c.run != pl.cur {
		c.run.p.Resume() //nolint:errcheck // killed meanwhile; the next run is watched
		return nil
	}
	var t *trigger
	for _, x := range pl.triggers {
		if x.kind == FaultBetweenWrites && !x.fired {
			t = x
			break
		}
	}
	key := c.keys[0]
	pl.note("run %d committed the first write that names %s (%s): the lab stops it there (SIGSTOP), before it writes anything more", c.run.n, key, inTables(c.tables[key]))
	committed, _ := pl.committedIn(pl.l.Snapshot())
	if err := pl.end(c.run, committed); err != nil {
		return err
	}
	if w.unchangedSince(c.version) && t != nil {
		t.fired = true
		pl.mu.Lock()
		pl.rec.Between = append(pl.rec.Between, betweenKill{Key: key, Run: c.run.n, Tables: c.tables[key], At: time.Since(pl.start)})
		pl.mu.Unlock()
	} else {
		pl.note("run %d committed more before it died: the lab waits for the next order's first write", c.run.n)
	}
	var err error
	pl.cur, err = pl.startProgram(ctx)
	return err
}

// inTables says where an order's rows are: "a row in charges", "rows in
// charges and processed".
func inTables(tables []string) string {
	if len(tables) == 1 {
		return "a row in " + tables[0]
	}
	return "rows in " + strings.Join(tables[:len(tables)-1], ", ") + " and " + tables[len(tables)-1]
}
