package lab

// The consumer groups feature: consumer clients of the broker's groups
// (broker.NewConsumer), driven by `consumer start|restart|stop`, `seek`,
// and the values lag(G), lag_seconds(G), delivered(G), processed(G) and
// state(CONSUMER).
//
// A consumer client is a goroutine the lab owns. For each record it runs
// DESIGN.md's order: receive → commit if ack=before → the before-work
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
// so. A log has no dead-letter queue, and lab/command has no retry-topic
// option, so nothing moves it elsewhere.
//
// Every delivery goes into the checker's history with its group, so
// duplicate_deliveries and order_violations count them; the deliveries a
// seek asked for again are marked as replays and are not duplicates.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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
	l *Lab
	w *world

	mu         sync.Mutex
	consumers  map[string]*consumerClient // every consumer started in this world, by name
	busy       map[string]bool            // a start, restart or stop is under way
	deliveries []Delivery
	progress   map[groupPartition]*progress
	processed  map[string]map[string]bool // group → message ids whose work was done
	delivered  map[string]int             // group → deliveries
	closed     bool
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
	return &groupSet{l: l, w: w, consumers: map[string]*consumerClient{}, busy: map[string]bool{},
		progress: map[groupPartition]*progress{}, processed: map[string]map[string]bool{}, delivered: map[string]int{}}
}

// consumerClient is one named consumer. Each start or restart makes a new
// run with a new broker consumer; the client keeps its name, counts and
// state across runs.
type consumerClient struct {
	g    *groupSet
	name string

	mu      sync.Mutex
	cmd     command.Consumer // the effective start command, options merged
	state   string
	run     *consumerRun // the current or last run
	runs    int
	crash   string // armed crash point
	waiting string
	stats   consumerStats
	lastErr string
}

type consumerStats struct {
	delivered, processed, failures, givenUp, commits, commitErrors int
}

// consumerRun is one life of a consumer client: a broker consumer and the
// goroutine that polls it.
type consumerRun struct {
	cc   *consumerClient
	cn   *broker.Consumer
	cmd  command.Consumer
	opts clientPolicy
	rng  *rand.Rand

	soft, hard         context.Context // soft: stop asks; hard: the work and commits
	stopSoft, stopHard context.CancelFunc
	done               chan struct{}

	pacer pacer // rate=
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
			return g.stop(r, c)
		}
	case command.Seek:
		return g.seek(ctx, r, c)
	}
	return fmt.Errorf("%s: the consumer groups have no handler for this command", cmd.Name())
}

// claim marks a consumer name busy for one command; release undoes it.
func (g *groupSet) claim(verb, name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	if g.busy[name] {
		return fmt.Errorf("%s: another command is starting or stopping %s; try again once it has finished", verb, name)
	}
	g.busy[name] = true
	return nil
}

func (g *groupSet) release(name string) {
	g.mu.Lock()
	delete(g.busy, name)
	g.mu.Unlock()
}

func (g *groupSet) get(name string) *consumerClient {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.consumers[name]
}

// names lists the consumer clients, sorted.
func (g *groupSet) names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.consumers))
	for n := range g.consumers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (g *groupSet) has(name string) bool { return g.get(name) != nil }

// checkStart checks what a start or restart names, before anything happens.
func (g *groupSet) checkStart(verb string, c command.Consumer) error {
	if strings.HasPrefix(c.Client, "_") {
		return fmt.Errorf("%s: client names cannot start with '_'", verb)
	}
	if broker.IsInternalTopic(c.Topic) {
		return fmt.Errorf("%s: %s is the broker's own topic; consumers read the topics you create", verb, c.Topic)
	}
	if _, err := g.w.topic(c.Topic); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	o := c.Options
	if o.Retry == "none" && o.MaxAttempts > 1 {
		return fmt.Errorf("%s: max-attempts=%d with retry=none: without retries there is one attempt; use retry=immediate or retry=backoff", verb, o.MaxAttempts)
	}
	if o.Service != "" {
		if _, ok := g.w.handler(o.Service); !ok {
			return fmt.Errorf("%s: service=%s: %s", verb, o.Service, g.w.svc.notRunning(o.Service))
		}
	}
	return nil
}

// nameTaken says whether a consumer name is already a producer, a load or
// a service: one name, one client, so that a fault armed for it is clear.
func (g *groupSet) nameTaken(name string) string {
	w := g.w
	w.mu.Lock()
	_, producer := w.clients[name]
	w.mu.Unlock()
	switch {
	case producer:
		return "a producer client"
	case slices.Contains(command.Services, name):
		return "a service's name"
	case w.queues.has(name):
		return "a worker"
	}
	for _, ld := range w.loadStates() {
		if ld.Client == name {
			return "a load's client"
		}
	}
	return ""
}

func (g *groupSet) start(ctx context.Context, r *run, c command.Consumer) error {
	verb := "consumer start " + c.Client
	if err := g.claim(verb, c.Client); err != nil {
		return err
	}
	defer g.release(c.Client)
	if cc := g.get(c.Client); cc != nil {
		if st := cc.stateNow(); st != ClientStopped {
			return fmt.Errorf("%s: %s is already %s (group %s, topic %s); consumer restart %s starts it again, consumer stop %s ends it",
				verb, c.Client, st, cc.command().Group, cc.command().Topic, c.Client, c.Client)
		}
	} else if what := g.nameTaken(c.Client); what != "" {
		return fmt.Errorf("%s: %s is already %s; give the consumer a name of its own", verb, c.Client, what)
	}
	if err := g.checkStart(verb, c); err != nil {
		return err
	}
	r.begin(c.String())
	cc := g.get(c.Client)
	fresh := cc == nil
	if fresh {
		cc = &consumerClient{g: g, name: c.Client, state: ClientStopped}
	}
	if err := cc.launch(ctx, r, c, "joined"); err != nil {
		return err
	}
	if fresh {
		g.mu.Lock()
		g.consumers[c.Client] = cc
		g.mu.Unlock()
	}
	return nil
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
	out.Options = mergeOptions(out.Options, c.Options)
	return out
}

func (g *groupSet) restart(ctx context.Context, r *run, c command.Consumer) error {
	verb := "consumer restart " + c.Client
	if err := g.claim(verb, c.Client); err != nil {
		return err
	}
	defer g.release(c.Client)
	cc := g.get(c.Client)
	if cc == nil {
		return fmt.Errorf("%s: no consumer named %s; start one with consumer start %s group=GROUP topic=TOPIC%s",
			verb, c.Client, c.Client, didYouMean(c.Client, g.names()))
	}
	next := merge(cc.command(), c)
	if err := g.checkStart(verb, next); err != nil {
		return err
	}
	r.begin(c.String())
	was := cc.stateNow()
	if was == ClientUp {
		cc.halt(false)
	}
	return cc.launch(ctx, r, next, fmt.Sprintf("was %s; it rejoined", was))
}

func (g *groupSet) stop(r *run, c command.Consumer) error {
	verb := "consumer stop " + c.Client
	if err := g.claim(verb, c.Client); err != nil {
		return err
	}
	defer g.release(c.Client)
	cc := g.get(c.Client)
	if cc == nil {
		return fmt.Errorf("%s: no consumer named %s%s", verb, c.Client, didYouMean(c.Client, g.names()))
	}
	was := cc.stateNow()
	if was == ClientStopped {
		return fmt.Errorf("%s: %s is stopped already", verb, c.Client)
	}
	r.begin(c.String())
	err := cc.halt(true)
	cmd := cc.command()
	switch was {
	case ClientCrashed:
		r.say(EventOutcome, "%s stopped; it had crashed, so group %s dropped it when its session ran out", c.Client, cmd.Group)
	default:
		r.say(EventOutcome, "%s stopped and left group %s, which hands its partitions to the others at once", c.Client, cmd.Group)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return nil
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
	if policy.rate > 0 {
		cfg.MaxPollRecords = max(1, min(consumerPollRecords, int(policy.rate/10)))
	}
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
	cc.mu.Lock()
	cc.runs++
	seed := cc.runs
	cc.mu.Unlock()
	h := fnv.New64a()
	h.Write([]byte(cc.name))
	ru := &consumerRun{cc: cc, cn: cn, cmd: cmd, opts: policy, rng: rand.New(rand.NewPCG(h.Sum64(), uint64(seed))),
		done: make(chan struct{})}
	ru.hard, ru.stopHard = context.WithCancel(g.w.ctx)
	ru.soft, ru.stopSoft = context.WithCancel(ru.hard)

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		ru.stopHard()
		cn.Crash()
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	cc.mu.Lock()
	cc.cmd, cc.state, cc.run, cc.crash, cc.waiting, cc.lastErr = cmd, ClientUp, ru, cmd.Options.Crash, "", ""
	cc.mu.Unlock()
	g.mu.Unlock()
	go ru.loop()

	text := fmt.Sprintf("%s %s group %s (generation %d) reading %s: %s", cc.name, how, cmd.Group, cn.Generation(), cmd.Topic, describeAssignment(cn.Assignment()))
	text += "; " + policy.describe(cmd)
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

// describe says how the client works, in a few words.
func (p clientPolicy) describe(cmd command.Consumer) string {
	var parts []string
	if p.ackBefore {
		parts = append(parts, "it commits each offset before the work (at most once)")
	} else {
		parts = append(parts, "it commits each offset after the work (at least once)")
	}
	if p.service != "" {
		parts = append(parts, "the work is "+p.service+"'s handling of the message")
	}
	if p.rate > 0 {
		parts = append(parts, fmt.Sprintf("%s records/s of lab time", trimFloat(p.rate)))
	}
	if f := p.fail; f.Kind != "" {
		parts = append(parts, "fail="+f.String())
	}
	if p.retry != "none" {
		r := fmt.Sprintf("retry=%s up to %d attempts", p.retry, p.maxAttempts)
		if p.retry == "backoff" {
			r += fmt.Sprintf(" (base %v, cap %v, jitter %s)", p.base, p.cap, p.jitter)
		}
		parts = append(parts, r)
	}
	if cmd.Options.Crash != "" {
		parts = append(parts, "it crashes once at "+cmd.Options.Crash)
	}
	return strings.Join(parts, "; ")
}

// halt ends the current run: it asks the loop to finish the record in
// hand, waits (cutting the work short after a request timeout), and, when
// leave, closes the broker consumer so it leaves its group. A crashed run
// only has its state changed.
func (cc *consumerClient) halt(leave bool) error {
	cc.mu.Lock()
	ru := cc.run
	st := cc.state
	cc.mu.Unlock()
	if ru == nil {
		return nil
	}
	ru.stopSoft()
	t := time.NewTimer(cc.g.w.timing.RequestTimeout)
	select {
	case <-ru.done:
	case <-t.C:
		ru.stopHard()
		<-ru.done
	}
	t.Stop()
	ru.stopHard()
	var err error
	if st == ClientUp {
		err = ru.cn.Close()
	}
	cc.mu.Lock()
	if leave || cc.state == ClientUp {
		cc.state = ClientStopped
	}
	cc.waiting = ""
	cc.mu.Unlock()
	return err
}

func (cc *consumerClient) stateNow() string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.state
}

func (cc *consumerClient) command() command.Consumer {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.cmd
}

// close stops every run without a word: the world is going away.
func (g *groupSet) close() {
	g.mu.Lock()
	g.closed = true
	var runs []*consumerRun
	for _, cc := range g.consumers {
		cc.mu.Lock()
		if cc.run != nil {
			runs = append(runs, cc.run)
		}
		cc.mu.Unlock()
	}
	g.mu.Unlock()
	for _, ru := range runs {
		ru.stopHard()
		<-ru.done
		ru.cn.Crash() // no goodbye: the cluster is closing
	}
}

// --- the client's work

// loop polls and works until it is stopped or crashes.
func (ru *consumerRun) loop() {
	defer close(ru.done)
	for ru.soft.Err() == nil {
		recs, err := ru.cn.Poll(ru.soft)
		if err != nil {
			if ru.soft.Err() != nil || errors.Is(err, broker.ErrConsumerClosed) || errors.Is(err, broker.ErrClosed) {
				return
			}
			if sleepCtx(ru.soft, 20*time.Millisecond) != nil {
				return
			}
			continue
		}
		gen := ru.cn.Generation()
		for _, rec := range recs {
			if ru.cn.Generation() != gen {
				break // the group rebalanced: the rest go to the partitions' owners from the last commit
			}
			if !ru.handle(rec) {
				return
			}
		}
	}
}

// workResult is how the work for one record ended.
type workResult int

const (
	workDone    workResult = iota // processed (or "already done")
	workGivenUp                   // failed its last attempt, or permanently
	workCrashed                   // the service crashed, and the client with it
	workStopped                   // the client was stopped in the middle
)

// handle runs the client's work for one record; false means the run is
// over (crashed or stopped).
func (ru *consumerRun) handle(rec broker.ConsumerRecord) bool {
	cc, g := ru.cc, ru.cc.g
	if !ru.pace() {
		return false
	}
	d := g.deliver(cc, ru.cmd.Group, rec, g.l.clock.Now())
	where := fmt.Sprintf("%s offset %d", rec.TopicPartition, rec.Offset)
	if ru.opts.ackBefore {
		ru.commit(rec, d.MsgID)
	}
	if ru.crashPoint("before-work", d.MsgID, where) {
		return false
	}
	switch ru.work(rec, d) {
	case workCrashed:
		return false
	case workStopped:
		return false
	}
	if ru.crashPoint("after-work", d.MsgID, where) {
		return false
	}
	if !ru.opts.ackBefore {
		ru.commit(rec, d.MsgID)
	}
	return true
}

// pace waits, in lab time, until the rate lets the next record in.
func (ru *consumerRun) pace() bool {
	return ru.pacer.wait(ru.soft, ru.cc.g.l.clock, ru.opts.rate)
}

// work tries the record until it is done, given up, or the client goes.
func (ru *consumerRun) work(rec broker.ConsumerRecord, d Delivery) workResult {
	cc, g := ru.cc, ru.cc.g
	msg := services.Message{ID: d.MsgID, Key: d.Key, Value: string(rec.Value)}
	wait := time.Duration(0)
	for attempt := 1; ; {
		err := ru.attempt(msg)
		switch {
		case err == nil:
			g.processedBy(cc, d)
			if wait > 0 {
				cc.setWaiting("")
			}
			return workDone
		case errors.Is(err, services.ErrCrashed):
			ru.crashNow(fmt.Sprintf("%s crashed with %s while working on %s (%s offset %d): %v", cc.name, ru.opts.service, d.MsgID, rec.TopicPartition, rec.Offset, err))
			return workCrashed
		case errors.Is(err, services.ErrNotRunning):
			// Not a failure of the message: the service is down. The record
			// stays uncommitted, and the client waits for the service.
			if wait == 0 {
				cc.setWaiting(ru.opts.service)
				g.event(false, "%s waits for %s, which is not running: %s (%s offset %d) stays uncommitted and the lag grows until it runs again",
					cc.name, ru.opts.service, d.MsgID, rec.TopicPartition, rec.Offset)
			}
			wait = min(max(2*wait, serviceWaitMin), serviceWaitMax)
			if g.l.clock.Sleep(ru.soft, wait) != nil {
				return workStopped
			}
			continue
		}
		cc.failed(err)
		permanent := errors.Is(err, errPermanent) || errors.Is(err, services.ErrBadMessage)
		if permanent || attempt >= ru.opts.maxAttempts {
			why := fmt.Sprintf("after %d attempt(s)", attempt)
			if permanent {
				why = "at once: the failure is permanent, retrying cannot help"
			}
			cc.gaveUp()
			g.event(false, "%s gave up on %s (%s offset %d) %s: %v; a log has no dead-letter queue, so the record is skipped and its offset committed",
				cc.name, d.MsgID, rec.TopicPartition, rec.Offset, why, err)
			return workGivenUp
		}
		pause := ru.opts.backoff(attempt, ru.rng)
		g.event(true, "%s attempt %d on %s failed: %v; retrying in %v", cc.name, attempt, d.MsgID, err, pause.Round(time.Millisecond))
		if pause > 0 && g.l.clock.Sleep(ru.soft, pause) != nil {
			return workStopped
		}
		if ru.soft.Err() != nil {
			return workStopped
		}
		attempt++
	}
}

// attempt is one try at the work: the simulated failure, then the service.
func (ru *consumerRun) attempt(m services.Message) error {
	return ru.opts.attempt(ru.hard, ru.cc.g.w, ru.rng, m)
}

// crashPoint crashes the client if its armed crash point is at.
func (ru *consumerRun) crashPoint(at, msgID, where string) bool {
	cc := ru.cc
	cc.mu.Lock()
	armed := cc.crash == at
	if armed {
		cc.crash = "" // fires once
	}
	cc.mu.Unlock()
	if !armed {
		return false
	}
	text := fmt.Sprintf("%s crashed at %s of %s (%s)", cc.name, at, msgID, where)
	switch {
	case at == "before-work" && ru.opts.ackBefore:
		text += ": its offset was committed before the work, so nobody will process it"
	case at == "before-work":
		text += ": neither processed nor committed, so the partition's next owner processes it"
	case ru.opts.ackBefore:
		text += ": the work is done and its offset was committed before it; nothing is lost or repeated"
	default:
		text += ": the work is done but its offset is not committed, so the partition's next owner processes it again"
	}
	ru.crashNow(text)
	return true
}

// crashNow stops the run as if its process died: no commit, no leave.
func (ru *consumerRun) crashNow(text string) {
	cc, g := ru.cc, ru.cc.g
	ru.cn.Crash()
	cc.mu.Lock()
	cc.state = ClientCrashed
	cc.waiting = ""
	cc.mu.Unlock()
	session := ru.cmd.Session
	if session == 0 {
		session = 10 * g.w.timing.HeartbeatTimeout
	}
	g.event(false, "%s; group %s drops %s once its session of %v runs out (consumer restart %s brings it back)", text, ru.cmd.Group, cc.name, session, cc.name)
}

// commit commits the offset after rec. A commit that fails is reported and
// the client goes on, as a real one does: the next commit covers it, and
// if none comes the record is read again from the last commit.
func (ru *consumerRun) commit(rec broker.ConsumerRecord, msgID string) {
	cc, g := ru.cc, ru.cc.g
	ctx, cancel := context.WithTimeout(ru.hard, g.w.timing.RequestTimeout)
	defer cancel()
	err := ru.cn.CommitOffsets(ctx, map[broker.TopicPartition]int64{rec.TopicPartition: rec.Offset + 1})
	if ru.hard.Err() != nil {
		return // stopped or retired: the commit's fate does not matter now
	}
	cc.mu.Lock()
	if err == nil {
		cc.stats.commits++
	} else {
		cc.stats.commitErrors++
		cc.lastErr = err.Error()
	}
	cc.mu.Unlock()
	if err == nil {
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
	g.event(false, "%s's commit of %s offset %d (after %s) failed: %s", cc.name, rec.TopicPartition, rec.Offset+1, msgID, why)
}

func (cc *consumerClient) failed(err error) {
	cc.mu.Lock()
	cc.stats.failures++
	cc.lastErr = err.Error()
	cc.mu.Unlock()
}

func (cc *consumerClient) gaveUp() {
	cc.mu.Lock()
	cc.stats.givenUp++
	cc.mu.Unlock()
}

func (cc *consumerClient) setWaiting(service string) {
	cc.mu.Lock()
	cc.waiting = service
	cc.mu.Unlock()
}

// event puts a client's event in the timeline, unless its world has been
// retired.
func (g *groupSet) event(detail bool, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if !detail {
		g.l.syncBroker(g.w) // what the broker did first comes first
	}
	g.l.tl.mu.Lock()
	defer g.l.tl.mu.Unlock()
	if g.w.retired {
		return
	}
	g.l.tl.addLocked(Event{Time: g.l.clock.Now(), Kind: EventClient, Text: text, Detail: detail})
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

func (g *groupSet) processedBy(cc *consumerClient, d Delivery) {
	g.mu.Lock()
	set := g.processed[d.Group]
	if set == nil {
		set = map[string]bool{}
		g.processed[d.Group] = set
	}
	set[d.MsgID] = true
	g.mu.Unlock()
	cc.mu.Lock()
	cc.stats.processed++
	cc.mu.Unlock()
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
		gs, err := g.groupState(v.Arg)
		if err != nil {
			// Not yet: a consumer may be about to join it.
			return nil, true, notNow{fmt.Errorf("%s: %w", v, err)}
		}
		if v.Func == "lag" {
			return float64(gs.Lag), true, nil
		}
		return gs.LagSeconds, true, nil
	case "delivered", "processed":
		g.mu.Lock()
		n, known := g.delivered[v.Arg]
		if v.Func == "processed" {
			n = len(g.processed[v.Arg])
		}
		g.mu.Unlock()
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

// observe hands the checker every delivery.
func (groupsFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	for _, d := range w.groups.deliveryCopy() {
		key := d.Key
		if key == "" {
			// No key, no promise of order: each unkeyed message is its own
			// key, so order_violations never compares two of them.
			key = "\x00" + d.MsgID
		}
		h.Deliveries = append(h.Deliveries, checker.Delivery{MsgID: d.MsgID, Client: d.Client, Group: d.Group, Key: key, Replay: d.Replay})
	}
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
			Service: cc.cmd.Options.Service, Waiting: cc.waiting, Delivered: cc.stats.delivered, Processed: cc.stats.processed,
			Failures: cc.stats.failures, GivenUp: cc.stats.givenUp, Commits: cc.stats.commits, CommitErrors: cc.stats.commitErrors,
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
