package lab

// The consumer groups feature: consumer clients of the broker's groups
// (broker.NewConsumer), driven by `consumer start|restart|stop`, `seek`,
// and the values lag(G), lag_seconds(G), delivered(G), processed(G) and
// state(CONSUMER).
//
// A consumer client is a goroutine the lab owns. For each record it runs
// the lab's order of work: receive → commit if ack=before → the before-work
// crash point → the work → the after-work crash point → commit if
// ack=after. For a log, "ack" is committing the offset after the record,
// one commit per record, so that a crash between work and commit
// redelivers exactly that record. The work is the client's simulated
// failures (fail=) and, with service=NAME, the service's Handle, whose
// error decides as services.Handler documents: nil acks, ErrCrashed
// crashes the client with it, ErrNotRunning waits for the service (the
// record stays uncommitted and the lag grows), ErrBadMessage gives up at
// once, and anything else follows the retry policy. A record the client
// gives up on is skipped: its offset is committed and the timeline says
// so. A log has no dead-letter queue and cannot delete one record; with
// retry-topic=T the client first produces the record to T (same key and
// message id, acks=all) and commits past it only once T confirmed the
// copy; if T does not, the client crashes rather than skip a record
// nobody holds for it.
//
// Every delivery goes into the checker's history with its group, so
// duplicate_deliveries counts them; the deliveries a seek asked for again
// are marked as replays and are not duplicates. Finished work goes in too,
// in the order it finished, for order_violations; moves go in as moves.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/raftnet"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// EventClient is what a background client did: a crash, a record it gave
// up on, a failed commit; its deliveries and retries are Detail events.
const EventClient EventKind = "client"

// Consumer client states, as state(CONSUMER) reads them.
const (
	ClientUp      = "up"
	ClientCrashed = "crashed"
	ClientStopped = "stopped"
)

// Client option defaults.
const (
	defaultMaxAttempts = 5
	defaultBackoffBase = time.Second
	defaultBackoffCap  = 5 * time.Minute
	// consumerPollRecords bounds the records one poll hands the client: a
	// rebalance waits (up to a third of the session timeout) for the
	// client to finish what it holds, so it should not hold much.
	consumerPollRecords = 10
	// serviceWaitMin and serviceWaitMax bound the lab-time pause between
	// tries while the client's service is not running.
	serviceWaitMin = 100 * time.Millisecond
	serviceWaitMax = 2 * time.Second
)

// Delivery is one record handed to a consumer client, as the history keeps
// it.
type Delivery struct {
	MsgID     string    `json:"msg_id"`
	Client    string    `json:"client"`
	Group     string    `json:"group"`
	Topic     string    `json:"topic"`
	Partition int       `json:"partition"`
	Offset    int64     `json:"offset"`
	Key       string    `json:"key,omitempty"`
	Replay    bool      `json:"replay,omitempty"` // asked for again by a seek: not a duplicate
	Time      time.Time `json:"time"`             // lab time
}

// ConsumerState is one consumer client as the screens show it. The group
// itself (members, assignment, committed offsets, lag) is in
// Snapshot.Cluster.Groups, as the broker's coordinator sees it.
type ConsumerState struct {
	Name       string   `json:"name"`
	Group      string   `json:"group"`
	Topic      string   `json:"topic"`
	State      string   `json:"state"`   // up, crashed or stopped
	Started    string   `json:"started"` // the command that (re)started it
	Service    string   `json:"service,omitempty"`
	Member     string   `json:"member,omitempty"`
	Generation int      `json:"generation,omitempty"`
	Assignment []string `json:"assignment,omitempty"` // orders/0, …; empty while joining or idle
	// Waiting names the service it waits for, while that is not running.
	Waiting      string `json:"waiting,omitempty"`
	Delivered    int    `json:"delivered"`
	Processed    int    `json:"processed"` // work done (an "already done" duplicate included)
	Failures     int    `json:"failures"`  // failed attempts
	GivenUp      int    `json:"given_up"`  // records skipped after their last attempt
	Commits      int    `json:"commits"`
	CommitErrors int    `json:"commit_errors"`
	LastError    string `json:"last_error,omitempty"`
	// Crash is the armed crash point, "" once it fired or when none.
	Crash string `json:"crash,omitempty"`
}

// groupsFeature is the consumer groups' family of commands and values.
type groupsFeature struct{}

// groupSet is one world's consumer clients and what they received.
type groupSet struct {
	clientSet[*consumerClient] // delivered and processed by group

	// Guarded by mu.
	deliveries []Delivery
	progress   map[groupPartition]*progress
	moves      []checker.Move
}

type groupPartition struct {
	group string
	tp    broker.TopicPartition
}

// progress is how far a group has read one partition, and the replay
// window a seek opened.
type progress struct {
	reached int64 // one past the highest offset delivered to the group
	// seek is a seek back that the group's owner has not been seen to
	// follow yet: the first delivery below reached (at the target, once it
	// is known) opens the replay window.
	seek        *pendingSeek
	replayUntil int64          // first deliveries below this since the window opened are replays
	replayed    map[int64]bool // offsets replayed since the window opened
}

type pendingSeek struct {
	target int64
	known  bool
}

func newGroupSet(l *Lab, w *world) *groupSet {
	return &groupSet{clientSet: newClientSet[*consumerClient](l, w, "consumer"), progress: map[groupPartition]*progress{}}
}

// consumerClient is one named consumer. Each start or restart makes a new
// run with a new broker consumer; the client keeps its name, counts and
// state across runs.
type consumerClient struct {
	clientRuns[command.Consumer, *consumerRun]
	g *groupSet

	stats consumerStats // guarded by mu
}

type consumerStats struct {
	delivered, givenUp, commits, commitErrors int
}

// consumerRun is one life of a consumer client: a broker consumer and the
// goroutine that polls it.
type consumerRun struct {
	clientRun
	cc  *consumerClient
	cn  *broker.Consumer
	cmd command.Consumer

	// commit=poll: the offsets to commit once the poll's records are done,
	// and the last record's message id for the timeline.
	pending     map[broker.TopicPartition]int64
	pendingLast string

	seenGen int // the group generation the loop last polled in
}

// --- commands

func (groupsFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	g := r.w.groups
	switch c := cmd.(type) {
	case command.Consumer:
		switch c.Action {
		case command.ActionStart:
			return g.start(ctx, r, c)
		case command.ActionRestart:
			return g.restart(ctx, r, c)
		case command.ActionStop:
			return g.stop(r, c.Client, c.String(), g.stopped)
		}
	case command.Seek:
		return g.seek(ctx, r, c)
	}
	return fmt.Errorf("%s: the consumer groups have no handler for this command", cmd.Name())
}

// has says whether a consumer of that name was ever started.
func (g *groupSet) has(name string) bool { return g.get(name) != nil }

// checkStart checks what a start or restart names, before anything happens.
func (g *groupSet) checkStart(verb string, c command.Consumer) error {
	if err := checkClientName(verb, c.Client); err != nil {
		return err
	}
	if broker.IsInternalTopic(c.Topic) {
		return fmt.Errorf("%s: %s is the broker's own topic; consumers read the topics you create", verb, c.Topic)
	}
	if _, err := g.w.topic(c.Topic); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if c.Commit == "poll" && c.Options.Ack == "before" {
		return fmt.Errorf("%s: commit=poll commits after the work on a poll's records, and ack=before commits before the work; drop one of them", verb)
	}
	if rt := c.RetryTopic; rt != "" {
		switch _, err := g.w.topic(rt); {
		case rt == c.Topic:
			return fmt.Errorf("%s: retry-topic=%s is the topic the consumer reads; a record it gives up on must go to another topic, e.g. retry-topic=%s-retry", verb, rt, c.Topic)
		case broker.IsInternalTopic(rt):
			return fmt.Errorf("%s: retry-topic=%s is the broker's own topic; create a topic for the retries, e.g. topic create %s-retry partitions=1", verb, rt, c.Topic)
		case err != nil:
			return fmt.Errorf("%s: retry-topic=%s: %w; create it first, e.g. topic create %s partitions=1", verb, rt, err, rt)
		}
	}
	return g.w.checkClientOptions(verb, c.Options)
}

func (g *groupSet) start(ctx context.Context, r *run, c command.Consumer) error {
	verb := "consumer start " + c.Client
	if err := g.claim(verb, c.Client); err != nil {
		return err
	}
	defer g.release(c.Client)
	if err := g.free(verb, c.Client); err != nil {
		return err
	}
	if err := g.checkStart(verb, c); err != nil {
		return err
	}
	r.begin(c.String())
	fresh := func() *consumerClient {
		cc := &consumerClient{g: g}
		cc.name, cc.state = c.Client, ClientStopped
		return cc
	}
	return g.launchNamed(c.Client, fresh, func(cc *consumerClient) error { return cc.launch(ctx, r, c, "joined") })
}

// merge lays a restart's options over the command a client was started
// with; crash= is armed only when the restart gives it (a crash fires once).
func merge(prev, c command.Consumer) command.Consumer {
	out := prev
	out.Action = command.ActionStart
	if c.Group != "" {
		out.Group = c.Group
	}
	if c.Topic != "" {
		out.Topic = c.Topic
	}
	if c.From != "" {
		out.From = c.From
	}
	if c.Session != 0 {
		out.Session = c.Session
	}
	if c.Commit != "" {
		out.Commit = c.Commit
	}
	if c.RetryTopic != "" {
		out.RetryTopic = c.RetryTopic
	}
	out.Options = mergeOptions(out.Options, c.Options)
	return out
}

func (g *groupSet) restart(ctx context.Context, r *run, c command.Consumer) error {
	verb := "consumer restart " + c.Client
	if err := g.claim(verb, c.Client); err != nil {
		return err
	}
	defer g.release(c.Client)
	cc, err := g.named(verb, c.Client, "group=GROUP topic=TOPIC")
	if err != nil {
		return err
	}
	next := merge(cc.command(), c)
	if err := g.checkStart(verb, next); err != nil {
		return err
	}
	r.begin(c.String())
	was := cc.haltUp()
	return cc.launch(ctx, r, next, fmt.Sprintf("was %s; it rejoined", was))
}

// stopped tells the learner where a stopped consumer's partitions go.
func (g *groupSet) stopped(r *run, cc *consumerClient, was string) {
	group := cc.command().Group
	switch was {
	case ClientCrashed:
		r.say(EventOutcome, "%s stopped; it had crashed, so group %s dropped it when its session ran out", cc.name, group)
	default:
		r.say(EventOutcome, "%s stopped and left group %s, which hands its partitions to the others at once", cc.name, group)
	}
}

// launch starts a run of the client with cmd and waits until it has
// joined its group. On failure the client keeps its state (a restart of a
// running client has stopped it by then) and is not registered if new.
func (cc *consumerClient) launch(ctx context.Context, r *run, cmd command.Consumer, how string) error {
	g := cc.g
	verb := fmt.Sprintf("consumer %s %s", cmd.Action, cc.name)
	policy := policyOf(cmd.Options)
	cfg := broker.ConsumerConfig{ClientID: cc.name, Group: cmd.Group, Topics: []string{cmd.Topic}, SessionTimeout: cmd.Session,
		MaxPollRecords: consumerPollRecords}
	if cmd.From == "latest" {
		cfg.ResetPolicy = broker.ResetLatest
	}
	cfg.MaxPollRecords = pollRecords(policy.rate)
	ctx, cancel := g.w.bind(ctx)
	defer cancel()
	session := cmd.Session
	if session == 0 {
		session = 10 * g.w.timing.HeartbeatTimeout
	}
	// A rejoin waits for every member to rejoin or for the longest session
	// to run out (a crashed member never rejoins).
	ctx, cancel2 := context.WithTimeout(ctx, 2*session+g.w.adminTimeout())
	defer cancel2()
	cn, err := g.w.cluster.NewConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	ru := &consumerRun{clientRun: newClientRun(g.l, g.w, &cc.clientCore, policy), cc: cc, cn: cn, cmd: cmd}
	if !launchRun(&g.clientSet, &cc.clientRuns, cmd, cmd.Options.Crash, ru, nil) {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}

	text := fmt.Sprintf("%s %s group %s (generation %d) reading %s: %s", cc.name, how, cmd.Group, cn.Generation(), cmd.Topic, describeAssignment(cn.Assignment()))
	text += "; " + policy.describeConsumer(cmd)
	r.say(EventOutcome, "%s", text)
	return nil
}

func describeAssignment(tps []broker.TopicPartition) string {
	if len(tps) == 0 {
		return "it owns no partition (idle: the group has more members than partitions)"
	}
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return "it owns " + strings.Join(s, ", ")
}

// describeConsumer says how a consumer works, in a few words.
func (p clientPolicy) describeConsumer(cmd command.Consumer) string {
	retries := ""
	if p.retry != "none" {
		retries = fmt.Sprintf("retry=%s up to %d attempts", p.retry, p.maxAttempts)
		if p.retry == "backoff" {
			retries += fmt.Sprintf(" (base %v, cap %v, jitter %s)", p.base, p.cap, p.jitter)
		}
	}
	if cmd.RetryTopic != "" {
		if retries != "" {
			retries += "; "
		}
		retries += "a record it gives up on goes to " + cmd.RetryTopic
	}
	settles := "commits each offset"
	if cmd.Commit == "poll" {
		settles = "commits once per poll"
	}
	return p.describe(settles, "records", retries, cmd.Options.Crash)
}

func (cc *consumerClient) where() string {
	cmd := cc.command()
	return fmt.Sprintf("group %s, topic %s", cmd.Group, cmd.Topic)
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

// --- the client's work

// loop polls and works until it is stopped or crashes.
func (ru *consumerRun) loop() {
	full := pollRecords(ru.opts.rate)
	ru.clientRun.loop(func() (bool, error) {
		recs, err := ru.cn.Poll(ru.soft)
		if err != nil {
			return false, err
		}
		gen := ru.cn.Generation()
		ru.noteGeneration(gen)
		for _, rec := range recs {
			if ru.cn.Generation() != gen {
				break // the group rebalanced: the rest go to the partitions' owners from the last commit
			}
			if !ru.handle(rec) {
				if ru.cc.stateNow() != ClientCrashed {
					ru.commitPending() // stopped: what is done is committed, as a closing consumer does
				}
				return true, nil
			}
		}
		if len(recs) < full {
			ru.pacer.rest() // caught up: no backlog to catch up on
		}
		ru.commitPending()
		return false, nil
	}, func(err error) bool {
		return errors.Is(err, broker.ErrConsumerClosed) || errors.Is(err, broker.ErrClosed)
	})
}

// handle runs the client's work for one record; false means the run is
// over (crashed or stopped).
func (ru *consumerRun) handle(rec broker.ConsumerRecord) bool {
	cc, g := ru.cc, ru.cc.g
	if !ru.pacer.wait(ru.soft, g.l.clock, ru.opts.rate) {
		return false
	}
	d := g.deliver(cc, ru.cmd.Group, rec, g.l.clock.Now())
	// A record given up on is skipped: its offset is committed.
	return ru.process(&cc.clientCore, consumerRecord{ru, rec, d}, true)
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
	cr.ru.commit(map[broker.TopicPartition]int64{cr.rec.TopicPartition: cr.rec.Offset + 1}, cr.d.MsgID)
}

// hold keeps rec's offset to commit with the rest of its poll.
func (ru *consumerRun) hold(rec broker.ConsumerRecord, msgID string) {
	if ru.pending == nil {
		ru.pending = map[broker.TopicPartition]int64{}
	}
	ru.pending[rec.TopicPartition] = rec.Offset + 1
	ru.pendingLast = msgID
}

// commitPending commits, in one request, what a poll's records left to
// commit; a crash or a stop before it leaves them to be read again.
func (ru *consumerRun) commitPending() {
	if len(ru.pending) == 0 {
		return
	}
	offsets, last := ru.pending, ru.pendingLast
	ru.pending, ru.pendingLast = nil, ""
	ru.commit(offsets, last)
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
				cc.name, ru.opts.service, d.MsgID, rec.TopicPartition, rec.Offset)
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
			ru.crashNow(fmt.Sprintf("%s crashed with %s while working on %s (%s offset %d): %v", cc.name, ru.opts.service, d.MsgID, rec.TopicPartition, rec.Offset, err))
			return workCrashed
		}
		cc.failed(err)
		permanent := errors.Is(err, errPermanent) || errors.Is(err, services.ErrBadMessage)
		if permanent || attempt >= ru.opts.maxAttempts {
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
		pause := ru.opts.backoff(attempt, ru.rng)
		g.w.retried(d.Group, cc.name, d.MsgID, attempt+1, g.l.clock.Now(), pause)
		g.event(true, "%s attempt %d on %s failed: %v; retrying in %v", cc.name, attempt, d.MsgID, err, pause.Round(time.Millisecond))
		ru.pacer.rest() // a backoff is not time to catch up on
		if pause > 0 && g.l.clock.Sleep(ru.soft, pause) != nil {
			return workStopped
		}
		if ru.soft.Err() != nil {
			return workStopped
		}
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
	_, p, err := g.w.producer(ctx, cc.name, producerKey{acks: broker.AcksAll, batch: command.DefaultBatch})
	var res broker.ProduceResult
	if err == nil {
		res = p.Produce(ctx, broker.Message{Topic: topic, Key: rec.Key, Value: rec.Value, MsgID: d.MsgID})[0]
		m.Outcome, m.Partition, m.Offset, err = outcomeOf(res.Outcome), res.Partition, res.Offset, res.Err
	}
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
		consumerCrashNotes.at(at, cr.ru.opts.ackBefore)))
}

// crashNow stops the run as if its process died: no commit, no leave.
func (ru *consumerRun) crashNow(text string) {
	cc, g := ru.cc, ru.cc.g
	ru.vanish()
	cc.crashed()
	session := ru.cmd.Session
	if session == 0 {
		session = 10 * g.w.timing.HeartbeatTimeout
	}
	g.event(false, "%s; group %s drops %s once its session of %v runs out (consumer restart %s brings it back)", text, ru.cmd.Group, cc.name, session, cc.name)
}

// commit commits offsets (each the one after the last record done). A
// commit that fails is reported and the client goes on, as a real one
// does: the next commit covers it, and if none comes the records are read
// again from the last commit.
func (ru *consumerRun) commit(offsets map[broker.TopicPartition]int64, msgID string) {
	cc, g := ru.cc, ru.cc.g
	err, gone := ru.settle(&cc.clientCore, &cc.stats.commits, &cc.stats.commitErrors, func(ctx context.Context) error {
		return ru.cn.CommitOffsets(ctx, offsets)
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

// --- seek

func (g *groupSet) seek(ctx context.Context, r *run, c command.Seek) error {
	verb := c.String()
	w := g.w
	part, err := w.partition(c.Partition.Topic, c.Partition.Partition)
	if err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	if c.To.Kind == command.SeekOffset {
		if err := checkSeekOffset(part, c.To.Offset); err != nil {
			return fmt.Errorf("seek: %w", err)
		}
	}
	if _, err := g.groupState(c.Group); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	tp := broker.TopicPartition{Topic: c.Partition.Topic, Partition: c.Partition.Partition}
	var to broker.SeekTarget
	switch c.To.Kind {
	case command.SeekOffset:
		to = broker.SeekOffset(c.To.Offset)
	case command.SeekEarliest:
		to = broker.SeekEarliest
	case command.SeekLatest:
		to = broker.SeekLatest
	case command.SeekTime:
		to = broker.SeekTime(c.To.Time)
	case command.SeekAgo:
		to = broker.SeekTime(g.l.clock.Now().Add(-c.To.Ago))
	default:
		return fmt.Errorf("seek: to=%s is not a seek target", c.To)
	}
	r.begin(verb)
	key := groupPartition{c.Group, tp}
	// The owner may follow the seek before SeekGroup returns: expect a
	// jump back from now on.
	g.mu.Lock()
	p := g.progressLocked(c.Group, tp)
	prev, reached := p.seek, p.reached
	p.seek = &pendingSeek{}
	g.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, w.adminTimeout())
	defer cancel2()
	off, err := w.cluster.SeekGroup(ctx, c.Group, tp, to)
	g.mu.Lock()
	p = g.progress[key]
	if err != nil {
		if p.seek != nil && !p.seek.known {
			p.seek = prev
		}
		g.mu.Unlock()
		return err
	}
	if p.seek != nil && !p.seek.known {
		p.seek = &pendingSeek{target: off, known: true}
		if off >= p.reached {
			p.seek = nil // forward: nothing comes again
		}
	}
	g.mu.Unlock()
	owner := ""
	if gs, err := g.groupState(c.Group); err == nil {
		for _, ps := range gs.Partitions {
			if ps.TopicPartition == tp {
				owner = ps.Owner
			}
		}
	}
	text := fmt.Sprintf("group %s now reads %s from offset %d", c.Group, tp, off)
	if off < reached {
		text += fmt.Sprintf("; offsets %d–%d come again, as replays, not duplicates", off, reached-1)
	} else if off > reached {
		text += fmt.Sprintf("; offsets %d–%d are skipped", reached, off-1)
	}
	if owner != "" {
		text += fmt.Sprintf(" (%s moves there at its next heartbeat)", owner)
	} else {
		text += " (whoever owns it next starts there)"
	}
	r.say(EventOutcome, "%s", text)
	return nil
}

// checkSeekOffset refuses an offset outside a partition's retained log,
// as its leader (or, with none, its best live replica) sees it now.
func checkSeekOffset(p broker.PartitionState, off int64) error {
	for _, r := range p.Replicas {
		if !r.Up || p.Leader != "" && r.Node != p.Leader {
			continue
		}
		tp := broker.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		switch {
		case off > r.HighWatermark:
			return fmt.Errorf("%w: offset %d is beyond the end of %s, whose next record will be %d", broker.ErrOffsetOutOfRange, off, tp, r.HighWatermark)
		case off < r.LogStart:
			return fmt.Errorf("%w: offset %d is below the log start of %s, %d; retention deleted it", broker.ErrOffsetOutOfRange, off, tp, r.LogStart)
		}
		return nil
	}
	return nil // nobody to ask now: the broker decides
}

// groupState reads a group from the broker, or says which groups there are.
func (g *groupSet) groupState(name string) (broker.ConsumerGroupState, error) {
	var names []string
	for _, gs := range g.w.cluster.SnapshotWindow(0).Groups {
		if gs.Group == name {
			return gs, nil
		}
		names = append(names, gs.Group)
	}
	if len(names) == 0 {
		return broker.ConsumerGroupState{}, fmt.Errorf("%w %q: there are no groups yet; consumer start NAME group=%s topic=TOPIC makes one", broker.ErrUnknownGroup, name, name)
	}
	return broker.ConsumerGroupState{}, fmt.Errorf("%w %q; the groups are %s%s", broker.ErrUnknownGroup, name, strings.Join(names, ", "), didYouMean(name, names))
}

// --- values and the checker

func (groupsFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	g := w.groups
	switch v.Func {
	case "lag", "lag_seconds":
		if v.Target.IsPartition {
			if _, err := w.partition(v.Target.Name, v.Target.Partition); err != nil {
				return nil, true, fmt.Errorf("%s: %w", v, err)
			}
		}
		gs, err := g.groupState(v.Arg)
		if err != nil {
			// Not yet: a consumer may be about to join it.
			return nil, true, notNow{fmt.Errorf("%s: %w", v, err)}
		}
		if v.Target.IsPartition {
			return partitionLag(v, gs)
		}
		if v.Func == "lag" {
			return float64(gs.Lag), true, nil
		}
		return gs.LagSeconds, true, nil
	case "idle":
		gs, err := g.groupState(v.Arg)
		if err != nil {
			return nil, true, notNow{fmt.Errorf("%s: %w", v, err)}
		}
		return float64(idleMembers(gs)), true, nil
	case "delivered", "processed", "workers":
		n, processed, workers, known := g.counts(v.Arg)
		switch v.Func {
		case "processed":
			n = processed
		case "workers":
			n = workers
		}
		if !known {
			if w.isQueue(v.Arg) {
				return queues.value(context.Background(), w, v)
			}
			if _, err := g.groupState(v.Arg); err != nil {
				return nil, true, notNow{fmt.Errorf("%s: %w", v, err)}
			}
		}
		return float64(n), true, nil
	case "state":
		if cc := g.get(v.Arg); cc != nil {
			return cc.stateNow(), true, nil
		}
	}
	return nil, false, nil
}

// partitionLag reads lag(GROUP, TOPIC/N): one partition's share of the
// group's lag.
func partitionLag(v command.Value, gs broker.ConsumerGroupState) (any, bool, error) {
	var reads []string
	for _, ps := range gs.Partitions {
		if ps.Topic == v.Target.Name && ps.Partition == v.Target.Partition {
			if v.Func == "lag" {
				return float64(ps.Lag), true, nil
			}
			return ps.LagSeconds, true, nil
		}
		reads = append(reads, ps.TopicPartition.String())
	}
	// Not yet: a member reading that topic may be about to join.
	return nil, true, notNow{fmt.Errorf("%s: group %s does not read %s; it reads %s", v, gs.Group, v.Target, orNothing(reads))}
}

func orNothing(list []string) string {
	if len(list) == 0 {
		return "nothing yet"
	}
	return strings.Join(list, ", ")
}

// observe hands the checker every delivery, the finished work and the
// moves to retry topics.
func (groupsFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	g := w.groups
	for _, d := range g.deliveryCopy() {
		h.Deliveries = append(h.Deliveries, checker.Delivery{MsgID: d.MsgID, Client: d.Client, Group: d.Group, Topic: d.Topic, Key: d.Key, Replay: d.Replay})
	}
	h.Done = append(h.Done, g.doneCopy()...)
	g.mu.Lock()
	h.Moves = append(h.Moves, g.moves...)
	g.mu.Unlock()
	return nil
}

func (g *groupSet) deliveryCopy() []Delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.deliveries)
}

// Deliveries returns a copy of every delivery to a consumer so far in this
// cluster, in order.
func (l *Lab) Deliveries() []Delivery {
	w, err := l.world()
	if err != nil {
		return nil
	}
	return w.groups.deliveryCopy()
}

// states copies the consumer clients for a snapshot, by name.
func (g *groupSet) states() []ConsumerState {
	var out []ConsumerState
	for _, name := range g.names() {
		cc := g.get(name)
		cc.mu.Lock()
		cs := ConsumerState{Name: name, Group: cc.cmd.Group, Topic: cc.cmd.Topic, State: cc.state, Started: cc.cmd.String(),
			Service: cc.cmd.Options.Service, Waiting: cc.waiting, Delivered: cc.stats.delivered, Processed: cc.processedN,
			Failures: cc.failures, GivenUp: cc.stats.givenUp, Commits: cc.stats.commits, CommitErrors: cc.stats.commitErrors,
			LastError: cc.lastErr, Crash: cc.crash}
		ru := cc.run
		cc.mu.Unlock()
		if ru != nil && cs.State == ClientUp {
			cs.Member, cs.Generation = ru.cn.MemberID(), ru.cn.Generation()
			for _, tp := range ru.cn.Assignment() {
				cs.Assignment = append(cs.Assignment, tp.String())
			}
		}
		out = append(out, cs)
	}
	return out
}
