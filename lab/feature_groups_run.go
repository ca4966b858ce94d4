package lab

// A consumer client's run: the loop that polls its broker consumer, the
// lab's order of work for each record, the commits, the moves to a retry
// topic, and the deliveries it records for the checker.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// consumerRun is one life of a consumer client: a broker consumer and the
// goroutine that polls it.
type consumerRun struct {
	clientRun
	cc  *consumerClient
	cn  *broker.Consumer
	cmd command.Consumer
	// session is the member's session timeout (groupSet.sessionFor)
	session time.Duration

	// commit=poll: what the poll's records leave to commit once they are
	// done; shared with the broker consumer, which takes it when the
	// client gives up its partitions in a rebalance.
	pending *heldOffsets

	seenGen int // the group generation the loop last polled in

	stalled stallState // stall: the loop waits while it lasts
}

// leave closes the broker consumer, so that it leaves its group at once.
func (ru *consumerRun) leave() error { return ru.cn.Close() }

// vanish drops the broker consumer without a goodbye: its group notices
// only when its session runs out.
func (ru *consumerRun) vanish() { ru.cn.Crash() }

// pollRecords is how many records one poll hands a consumer: at most
// consumerPollRecords, and a tenth of a second's worth under a rate.
func pollRecords(rate float64) int {
	if rate > 0 {
		return max(1, min(consumerPollRecords, int(rate/10)))
	}
	return consumerPollRecords
}

// loop polls and works until it is stopped or crashes.
func (ru *consumerRun) loop() {
	full := pollRecords(ru.opts.Rate)
	ru.clientRun.loop(func() (bool, error) {
		ru.waitStall()
		ru.pacer.Fetching()
		recs, err := ru.cn.Poll(ru.soft)
		if err != nil {
			return false, err
		}
		ru.noteGeneration(ru.cn.Generation())
		// The poll's records are handled at once in lab time, their
		// commits too: the run's hold keeps lab time for them from each
		// record it takes until the last commit.
		defer ru.putDown()
	records:
		for _, rec := range recs {
			ru.waitStall()
			switch ru.handle(rec) {
			case recordRevoked:
				break records
			case recordOver:
				if ru.cc.stateNow() != ClientCrashed {
					ru.commitPending() // stopped: what is done is committed, as a closing consumer does
				}
				return true, nil
			}
		}
		if len(recs) < full {
			ru.pacer.Rest() // caught up: no backlog to catch up on
		}
		ru.commitPending()
		return false, nil
	}, func(err error) bool {
		return errors.Is(err, broker.ErrConsumerClosed) || errors.Is(err, broker.ErrClosed)
	})
}

// handled is what became of a record handed to the client.
type handled int

const (
	recordDone    handled = iota // worked on, given up, or skipped
	recordRevoked                // its partition was given up first: not taken
	recordOver                   // the run is over (crashed or stopped)
)

// handle runs the client's work for one record. A record whose
// generation the group has left is not taken: in an eager rebalance the
// new generation reads every partition again from the last commit, so
// the partition's owner in it — this client too, if it kept the
// partition — gets the record then. A client whose rebalance had to go
// ahead while it waited (lab time paused, or slow) thus does not work on
// a record twice.
func (ru *consumerRun) handle(rec broker.ConsumerRecord) handled {
	cc, g := ru.cc, ru.cc.g
	if ru.cn.Generation() != rec.Generation {
		return recordRevoked
	}
	if !ru.pacer.Wait(ru.heldSoft, g.l.clock, ru.opts.Rate) {
		return recordOver
	}
	if ru.cn.Generation() != rec.Generation {
		return recordRevoked
	}
	now := g.l.clock.Now()
	ru.taken(now)
	d := g.deliver(cc, ru.cmd.Group, rec, now)
	// A record given up on is skipped: its offset is committed.
	if !ru.process(&cc.clientCore, consumerRecord{ru, rec, d}, true) {
		return recordOver
	}
	return recordDone
}

// consumerRecord is a record in a consumer's hands.
type consumerRecord struct {
	ru  *consumerRun
	rec broker.ConsumerRecord
	d   Delivery
}

func (cr consumerRecord) ack() {
	if cr.ru.cmd.Commit == "poll" {
		cr.ru.hold(cr.rec, cr.d.MsgID)
		return
	}
	cr.ru.commit(cr.rec.Generation, map[broker.TopicPartition]int64{cr.rec.TopicPartition: cr.rec.Offset + 1}, cr.d.MsgID)
}

// heldOffsets are offsets a commit=poll client has processed and not
// committed yet, of records fetched in one generation, and the last
// record's message id for the timeline.
type heldOffsets struct {
	mu      sync.Mutex
	offsets map[broker.TopicPartition]int64
	gen     int
	last    string
}

// take empties h and returns what it held.
func (h *heldOffsets) take() (offsets map[broker.TopicPartition]int64, gen int, last string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	offsets, gen, last = h.offsets, h.gen, h.last
	h.offsets, h.last = nil, ""
	return offsets, gen, last
}

// revoked is the consumer's OnRevoke: what was processed is committed as
// the client gives up its partitions, so a partition it keeps does not
// come back from an older commit.
func (h *heldOffsets) revoked() map[broker.TopicPartition]int64 {
	offsets, _, _ := h.take()
	return offsets
}

// hold keeps rec's offset to commit with the rest of its poll, which
// was fetched in the same generation.
func (ru *consumerRun) hold(rec broker.ConsumerRecord, msgID string) {
	h := ru.pending
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.offsets == nil || h.gen != rec.Generation {
		h.offsets = map[broker.TopicPartition]int64{}
	}
	h.offsets[rec.TopicPartition] = rec.Offset + 1
	h.gen, h.last = rec.Generation, msgID
}

// commitPending commits, in one request, what a poll's records left to
// commit; a crash or a stop before it leaves them to be read again.
func (ru *consumerRun) commitPending() {
	offsets, gen, last := ru.pending.take()
	if len(offsets) == 0 {
		return
	}
	ru.commit(gen, offsets, last)
}

// work tries the record until it is done, given up, or the client goes.
func (cr consumerRecord) work() workResult {
	ru, rec, d := cr.ru, cr.rec, cr.d
	cc, g := ru.cc, ru.cc.g
	msg := services.Message{ID: d.MsgID, Key: d.Key, Value: string(rec.Value)}
	wait := time.Duration(0)
	for attempt := 1; ; attempt++ {
		err, stopped := ru.try(&cc.clientCore, msg, &wait, func() {
			// The record stays uncommitted, and the client waits for the service.
			g.event(false, "%s waits for %s, which is not running: %s (%s offset %d) stays uncommitted and the lag grows until it runs again",
				cc.name, ru.opts.Service, d.MsgID, rec.TopicPartition, rec.Offset)
		})
		switch {
		case stopped:
			return workStopped
		case err == nil:
			g.processedBy(&cc.clientCore, d.Group, d.MsgID, d.Topic, d.Key)
			if wait > 0 {
				cc.setWaiting("")
			}
			return workDone
		case errors.Is(err, services.ErrCrashed):
			ru.crashNow(fmt.Sprintf("%s crashed with %s while working on %s (%s offset %d): %v", cc.name, ru.opts.Service, d.MsgID, rec.TopicPartition, rec.Offset, err))
			return workCrashed
		}
		cc.failed(err)
		permanent := errors.Is(err, clients.ErrPermanent) || errors.Is(err, services.ErrBadMessage)
		if permanent || attempt >= ru.opts.MaxAttempts {
			why := fmt.Sprintf("after %d attempt(s)", attempt)
			if permanent {
				why = "at once: the failure is permanent, retrying cannot help"
			}
			cc.gaveUp()
			if rt := ru.cmd.RetryTopic; rt != "" {
				return cr.move(rt, why, err)
			}
			g.event(false, "%s gave up on %s (%s offset %d) %s: %v; a log has no dead-letter queue, so the record is skipped and its offset committed",
				cc.name, d.MsgID, rec.TopicPartition, rec.Offset, why, err)
			return workGivenUp
		}
		pause := ru.opts.Backoff(attempt, ru.rng)
		g.w.retried(d.Group, cc.name, d.MsgID, attempt+1, g.l.clock.Now(), pause)
		g.event(true, "%s attempt %d on %s failed: %v; retrying in %v", cc.name, attempt, d.MsgID, err, pause.Round(time.Millisecond))
		ru.pacer.Rest() // a backoff is not time to catch up on
		if pause > 0 && g.l.clock.Sleep(ru.heldSoft, pause) != nil {
			return workStopped
		}
		if ru.soft.Err() != nil {
			return workStopped
		}
		g.w.retries.Arrived(d.Group, d.MsgID, attempt+1, g.l.clock.Now())
	}
}

// move produces a record the client gave up on to the retry topic, same
// key and message id, so that its offset can be committed: a log cannot
// delete one record, and the partition must move on. Given up means the
// copy is confirmed and the offset may be committed; a copy the retry
// topic did not confirm crashes the client instead, so the record is read
// again rather than skipped.
func (cr consumerRecord) move(topic, why string, failure error) workResult {
	ru, rec, d := cr.ru, cr.rec, cr.d
	cc, g := ru.cc, ru.cc.g
	m := checker.Move{MsgID: d.MsgID, Client: cc.name, Group: d.Group, From: rec.TopicPartition.String(), To: topic, Partition: -1, Offset: -1,
		Outcome: checker.Failed}
	// Long enough for the producer's retries to ride out a leader election
	// in the retry topic.
	ctx, cancel := context.WithTimeout(ru.hard, 2*g.w.timing.RequestTimeout)
	defer cancel()
	answered := ru.held.Asking()
	_, p, err := g.w.producer(ctx, cc.name, producerKey{acks: broker.AcksAll, batch: command.DefaultBatch})
	var res broker.ProduceResult
	if err == nil {
		res = p.Produce(ctx, broker.Message{Topic: topic, Key: rec.Key, Value: rec.Value, MsgID: d.MsgID})[0]
		m.Outcome, m.Partition, m.Offset, err = outcomeOf(res.Outcome), res.Partition, res.Offset, res.Err
	}
	answered()
	g.mu.Lock()
	g.moves = append(g.moves, m)
	g.mu.Unlock()
	if ru.hard.Err() != nil {
		return workStopped
	}
	if m.Outcome != checker.Acknowledged {
		if err == nil {
			err = fmt.Errorf("the copy was %s", m.Outcome)
		}
		ru.crashNow(fmt.Sprintf("%s could not move %s (%s offset %d) to %s: %v; rather than commit past a record nobody holds, it stops", cc.name, d.MsgID,
			rec.TopicPartition, rec.Offset, topic, err))
		return workCrashed
	}
	g.event(false, "%s gave up on %s (%s offset %d) %s: %v; it moved the record to %s/%d offset %d and commits past it, so %s moves on",
		cc.name, d.MsgID, rec.TopicPartition, rec.Offset, why, failure, topic, res.Partition, res.Offset, rec.TopicPartition)
	return workGivenUp
}

var consumerCrashNotes = crashNotes{
	beforeWorkAcked: "its offset was committed before the work, so nobody will process it",
	beforeWork:      "neither processed nor committed, so the partition's next owner processes it",
	afterWorkAcked:  "the work is done and its offset was committed before it; nothing is lost or repeated",
	afterWork:       "the work is done but its offset is not committed, so the partition's next owner processes it again",
}

// crash crashes the client at its armed crash point.
func (cr consumerRecord) crash(at string) {
	cr.ru.crashNow(fmt.Sprintf("%s crashed at %s of %s (%s offset %d): %s", cr.ru.cc.name, at, cr.d.MsgID, cr.rec.TopicPartition, cr.rec.Offset,
		consumerCrashNotes.at(at, cr.ru.opts.AckBefore)))
}

// crashNow stops the run as if its process died: no commit, no leave.
func (ru *consumerRun) crashNow(text string) {
	cc, g := ru.cc, ru.cc.g
	ru.vanish()
	cc.crashed()
	g.event(false, "%s; group %s drops %s once its session of %v runs out (consumer restart %s brings it back)", text, ru.cmd.Group, cc.name, ru.session, cc.name)
}

// commit commits offsets (each the one after the last record done) of
// records fetched in generation gen. A commit that fails is reported and
// the client goes on, as a real one does: the next commit covers it, and
// if none comes the records are read again from the last commit.
func (ru *consumerRun) commit(gen int, offsets map[broker.TopicPartition]int64, msgID string) {
	cc, g := ru.cc, ru.cc.g
	err, gone := ru.settle(&cc.clientCore, &cc.stats.commits, &cc.stats.commitErrors, func(ctx context.Context) error {
		return ru.cn.CommitFetched(ctx, gen, offsets)
	})
	if gone || err == nil {
		return
	}
	why := err.Error()
	switch {
	case errors.Is(err, raftnet.ErrRequestLost):
		why = "the request was lost on the way; the broker never saw it"
	case errors.Is(err, raftnet.ErrReplyLost):
		why = "the reply was lost; the commit may have happened"
	case errors.Is(err, broker.ErrFenced), errors.Is(err, broker.ErrRebalanceInProgress):
		why = "the group rebalanced and the partition may be someone else's now: " + err.Error()
	}
	var at []string
	for tp, off := range offsets {
		at = append(at, fmt.Sprintf("%s offset %d", tp, off))
	}
	slices.Sort(at)
	g.event(false, "%s's commit of %s (after %s) failed: %s", cc.name, strings.Join(at, ", "), msgID, why)
}

func (cc *consumerClient) gaveUp() {
	cc.mu.Lock()
	cc.stats.givenUp++
	cc.mu.Unlock()
}

// msgIDOf is a record's message id; a record written without one is
// named by where it is.
func msgIDOf(rec broker.ConsumerRecord) string {
	if rec.MsgID != "" {
		return rec.MsgID
	}
	return fmt.Sprintf("%s@%d", rec.TopicPartition, rec.Offset)
}

// deliver records one delivery in the history, deciding whether it is a
// replay a seek asked for.
func (g *groupSet) deliver(cc *consumerClient, group string, rec broker.ConsumerRecord, now time.Time) Delivery {
	d := Delivery{MsgID: msgIDOf(rec), Client: cc.name, Group: group, Topic: rec.Topic, Partition: rec.Partition,
		Offset: rec.Offset, Key: string(rec.Key), Time: now}
	g.mu.Lock()
	p := g.progressLocked(group, rec.TopicPartition)
	o := rec.Offset
	if s := p.seek; s != nil && o < p.reached && (!s.known || o == s.target) {
		p.replayUntil, p.replayed, p.seek = p.reached, map[int64]bool{}, nil
	}
	if o < p.replayUntil && !p.replayed[o] {
		d.Replay = true
		p.replayed[o] = true
	}
	p.reached = max(p.reached, o+1)
	g.deliveries = append(g.deliveries, d)
	g.delivered[group]++
	g.mu.Unlock()
	cc.mu.Lock()
	cc.stats.delivered++
	cc.mu.Unlock()
	replay := ""
	if d.Replay {
		replay = " (a replay)"
	}
	g.event(true, "%s received %s from %s offset %d%s", cc.name, d.MsgID, rec.TopicPartition, rec.Offset, replay)
	return d
}

func (g *groupSet) progressLocked(group string, tp broker.TopicPartition) *progress {
	k := groupPartition{group, tp}
	p := g.progress[k]
	if p == nil {
		p = &progress{replayed: map[int64]bool{}}
		g.progress[k] = p
	}
	return p
}
