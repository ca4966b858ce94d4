package challenge

// The pause: the lab stops a run in the middle of its work (SIGSTOP),
// holding a record it has not finished, starts the run that takes its
// place, and lets it go on (SIGCONT) once the group has read past what it
// held, to see what it does with the old records.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab"
)

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
		if ctx.Err() != nil {
			return nil // the run is over; play says why
		}
		return fmt.Errorf("%w: looking at the program's database: %v", ErrNotGraded, err)
	}
	// Paused here, the run would test nothing, or the lab could not tell:
	// it goes on, to be paused after a later line. It had finished its
	// batch (the commit that landed says so); it was inside a write, whose
	// lock would keep the next run from writing anything while it waits;
	// or its commit has not come, and a lab unsure of what it holds tries
	// a few more lines first.
	if len(held) == 0 || locked || !sure && pl.unsureTries < unsureLines {
		if len(held) > 0 && !locked && !sure {
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

// zombieSettled reports whether the run let go on after a pause has had
// its chance to act on what it held: a second after its first line since
// then, at once if it has ended, or zombieWake after it went on if it
// has done neither.
func (pl *player) zombieSettled() bool {
	if !pl.paused.zombie {
		return false
	}
	switch {
	case !pl.spokeAt.IsZero():
		return pl.zombieEnded || time.Since(pl.spokeAt) > time.Second
	case pl.zombieEnded:
		// Its last lines may still be on their way: they are queued
		// before its output is closed, unless something it started holds
		// that open.
		if (!closed(pl.paused.read) || len(pl.lines) > 0) && time.Since(pl.zombieEndedAt) < 2*time.Second {
			return false
		}
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
	pl.silentZombie = fmt.Sprintf("run %d, let go on after the pause, %s, and the lab could not tell that it held a record it had not finished", pl.paused.n, did)
}

// closed says whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// zombieWake is how long a run let go on after a pause may take to say
// anything before the lab grades what was done: on a busy machine a
// process woken by SIGCONT can wait more than a second to be scheduled,
// and the old records it holds are what the pause is there to test.
const zombieWake = 5 * time.Second

// resume lets the paused run go on, a zombie now. A run that no other
// run replaced while it was paused (no other run reported a record
// meanwhile) is said to be so, with what its group was doing, and so is
// one let go on before its group had read past the records it held: a
// pass such a pause cannot test is not graded (see idlePause).
func (pl *player) resume(snap lab.Snapshot, allDone bool) error {
	// A replacement that wrote nothing may have been waiting for the
	// database: whether the stopped run holds its write lock says so.
	lock := ""
	if !pl.replaced && pl.db != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		locked, err := writeLocked(ctx, pl.db)
		cancel()
		switch {
		case err != nil:
			lock = "; the lab could not try the database's write lock: " + err.Error()
		case locked:
			lock = fmt.Sprintf("; run %d holds the database's write lock", pl.paused.n)
		default:
			lock = "; the database's write lock is free"
		}
	}
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
	group := groupNow(snap, pl.ch.Group) + lock
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
