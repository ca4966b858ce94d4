package challenge

// The loop of a challenge run: each turn takes what the programs printed
// or that one ended, then looks at the lab, fires the faults that are due,
// and says whether the run is over.

import (
	"context"
	"fmt"
	"slices"
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
	pauseSure    bool
	heldOn       []int
	unsureTries  int       // pauses given up for want of a commit after the line
	replaced     bool      // a run other than the paused one has processed a record since
	spokeAt      time.Time // the paused run's first line since it went on; zero: none
	zombieEnded  bool      // it has ended since it went on
	zombieSilent bool      // it was given up on: zombieWake passed with neither

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

// pause lands in the middle of the next record's work, and starts the run
// that will take over. It waits for a line after which the run is working
// through a backlog: a run paused holding nothing would wake up with
// nothing to write.
func (pl *player) pause(ctx context.Context, t *trigger) error {
	before, _ := pl.committedIn(pl.l.Snapshot())
	// Half a record's work on, the commit after the line is done and the
	// next record's work is under way, if the run has a next record.
	time.Sleep(workMS * time.Millisecond / 2)
	if len(pl.holds(pl.cur)) == 0 {
		return nil
	}
	if err := pl.cur.p.Pause(); err != nil {
		return fmt.Errorf("%w: pausing run %d: %v", ErrNotGraded, pl.cur.n, err)
	}
	sure := pl.settleCommit(before)
	held := pl.holds(pl.cur)
	locked, err := writeLocked(ctx, pl.db)
	if err != nil {
		return fmt.Errorf("%w: looking at the program's database: %v", ErrNotGraded, err)
	}
	// Paused here, the run would test nothing, or the lab could not tell:
	// it goes on, to be paused after a later line. It had finished its
	// batch (the commit that landed says so); it was inside a write, whose
	// lock would keep the next run from writing anything while it waits;
	// or its commit has not come, and a lab unsure of what it holds tries
	// a few more lines first.
	if len(held) == 0 || locked || !sure && pl.unsureTries < unsureLines {
		if !sure {
			pl.unsureTries++
		}
		if err := pl.cur.p.Resume(); err != nil {
			return fmt.Errorf("%w: resuming run %d: %v", ErrNotGraded, pl.cur.n, err)
		}
		return nil
	}
	t.fired = true
	pl.paused, pl.pausedAt, pl.pauseSure, pl.heldOn = pl.cur, time.Now(), sure, held
	pl.note("the lab pauses run %d (SIGSTOP) in the middle of its work, as a long garbage-collection pause would: it sends nothing, not even heartbeats, and its session runs out", pl.cur.n)
	pl.releaseHeld()
	pl.cur, err = pl.startProgram(ctx)
	return err
}

// holds is the partitions on which run p has a record in hand that it
// has not finished: the record at its group's commit came in the same
// fetch as the one before it, which the run finished. A client hands its
// program whole fetches, so that record is in the batch the program's
// poll returned. A record still in the client's buffer would not do: a
// client drops its buffer when it learns its partitions have gone, and
// the run would wake up with nothing to write.
func (pl *player) holds(p *instance) []int {
	client := pl.clientID(p.n)
	var on []int
	pl.eachGroupPartition(pl.l.Snapshot(), func(partition int, committed, _ int64) {
		if committed > 0 && pl.l.HandedTogether(client, pl.ch.Topic, partition, committed-1) {
			on = append(on, partition)
		}
	})
	return on
}

// settleCommit waits, the run stopped, for the group's commits to move
// past before, what they were at the line the pause followed, and says
// whether they did. On a busy machine the commit after the line can
// still be on its way when the run is stopped; until it lands the
// group's commit points at the record the line named, and holds takes
// that finished record for one in hand. A commit that does not come
// (it was lost, not yet sent, or landed before the line was read) leaves
// the lab unsure of what the run holds.
func (pl *player) settleCommit(before int) bool {
	deadline := time.Now().Add(settleWithin)
	for {
		if c, _ := pl.committedIn(pl.l.Snapshot()); c > before {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// unsureLines is how many lines the lab lets pass, when unsure of what a
// run holds, before it pauses it all the same: a program that commits
// less often than once a record would never let it be sure.
const unsureLines = 3

// settleWithin is how long settleCommit waits: well inside the program's
// session, so the stop alone does not cost the run its partitions.
const settleWithin = 150 * time.Millisecond

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
			pl.zombieEnded = true
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

// zombieSettled reports whether the run let go on after a pause has had
// its chance to act on what it held: a second after its first line since
// then, or zombieWake after it went on if it has said nothing.
func (pl *player) zombieSettled() bool {
	if !pl.paused.zombie {
		return false
	}
	switch {
	case !pl.spokeAt.IsZero():
		return pl.zombieEnded || time.Since(pl.spokeAt) > time.Second
	case pl.zombieEnded:
		pl.unsureZombie("ended without a line")
		return true
	case time.Since(pl.resumedAt) <= zombieWake:
		return false
	}
	if !pl.zombieSilent {
		pl.zombieSilent = true
		pl.note("run %d has said nothing in the %v since it went on: the lab grades what was done (its last words: %s)", pl.paused.n, zombieWake, lastWords(pl.paused.p))
		pl.unsureZombie(fmt.Sprintf("said nothing in %v and did not end", zombieWake))
	}
	return true
}

// unsureZombie takes a paused run that went on and did what could be
// nothing at all: it said nothing before it ended or was given up on.
// A run sure to have held a record it had not finished may have dropped
// it, or refused to write it, without a word. Otherwise it may have held
// nothing (it had finished its batch, its last commit still on its
// way), and a pass tests nothing.
func (pl *player) unsureZombie(did string) {
	if pl.pauseSure {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.idlePause == "" {
		pl.idlePause = fmt.Sprintf("run %d, let go on after the pause, %s, and the lab could not tell that it held a record it had not finished", pl.paused.n, did)
	}
}

// zombieWake is how long a run let go on after a pause may take to say
// anything before the lab grades what was done: on a busy machine a
// process woken by SIGCONT can wait more than a second to be scheduled,
// and the old records it holds are what the pause is there to test.
const zombieWake = 5 * time.Second

// resume lets the paused run go on, a zombie now. A run that no other
// run replaced while it was paused (nothing was reported meanwhile) is
// said to be so, with what its group was doing, and the pass such a
// pause cannot test is not graded (see idlePause).
func (pl *player) resume(snap lab.Snapshot, allDone bool) error {
	if err := pl.paused.p.Resume(); err != nil {
		return fmt.Errorf("%w: resuming run %d: %v", ErrNotGraded, pl.paused.n, err)
	}
	pl.mu.Lock()
	pl.paused.zombie = true
	pl.mu.Unlock()
	pl.resumedAt = time.Now()
	held := time.Since(pl.pausedAt).Seconds()
	behind := pl.behindOnHeld(snap)
	if pl.replaced && (allDone || behind == "") {
		pl.note("the lab lets run %d go on (SIGCONT) after %.1f s: it still holds the records it fetched before the pause, though its group has given its partitions to run %d", pl.paused.n, held, pl.cur.n)
		return nil
	}
	if pl.replaced {
		// The records newer than what the run holds may not be written
		// yet: whatever it writes now is not stale, and a pass tests
		// nothing.
		pl.mu.Lock()
		pl.idlePause = fmt.Sprintf("run %d was let go on after %.1f s, before its group had read the records after those it held (%s)", pl.paused.n, held, behind)
		pl.mu.Unlock()
		pl.note("the lab lets run %d go on (SIGCONT) after %.1f s, though its group has not yet read the records after those it held: %s", pl.paused.n, held, behind)
		return nil
	}
	group := groupNow(snap, pl.ch.Group)
	pl.mu.Lock()
	pl.idlePause = fmt.Sprintf("run %d was paused for %.1f s and no other run processed a record meanwhile (%s)", pl.paused.n, held, group)
	pl.mu.Unlock()
	pl.note("the lab lets run %d go on (SIGCONT) after %.1f s, though no other run has processed a record since the pause: %s", pl.paused.n, held, group)
	return nil
}

// behindOnHeld says, of the partitions the paused run held records on,
// those whose group has not read to the end in snap, with how far it
// has; "" when none.
func (pl *player) behindOnHeld(snap lab.Snapshot) string {
	var behind []string
	pl.eachGroupPartition(snap, func(partition int, committed, hwm int64) {
		if slices.Contains(pl.heldOn, partition) && committed < hwm {
			behind = append(behind, fmt.Sprintf("%s/%d committed to %d of %d", pl.ch.Topic, partition, committed, hwm))
		}
	})
	return strings.Join(behind, ", ")
}

// groupNow says what group is doing in snap: its state, generation and
// members with what each is assigned.
func groupNow(snap lab.Snapshot, group string) string {
	for _, g := range snap.Cluster.Groups {
		if g.Group != group {
			continue
		}
		members := make([]string, 0, len(g.Members))
		for _, m := range g.Members {
			members = append(members, fmt.Sprintf("%s with %d partitions", m.ClientID, len(m.Assignment)))
		}
		what := fmt.Sprintf("group %s is %s in generation %d", g.Group, g.State, g.Generation)
		if g.RebalanceReason != "" {
			what += " (" + g.RebalanceReason + ")"
		}
		if len(members) == 0 {
			return what + ", with no members"
		}
		return what + ", members " + strings.Join(members, ", ")
	}
	return "group " + group + " is not in the lab's view"
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
