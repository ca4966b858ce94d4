package lab

// The consumer groups feature: consumer clients of the broker's groups
// (broker.NewConsumer), driven by `consumer start|restart|stop`, `seek`,
// and the values lag(G), lag_seconds(G), delivered(G), processed(G) and
// state(CONSUMER). Here are its types and commands; a client's run is in
// feature_groups_run.go, the values in feature_groups_values.go.
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
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
)

// Consumer client states, as state(CONSUMER) reads them.
const (
	ClientUp      = "up"
	ClientCrashed = "crashed"
	ClientStopped = "stopped"
)

// Consumer client limits.
const (
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

// fresh is a new consumer, stopped until its first run.
func (g *groupSet) fresh(name string) *consumerClient {
	return &consumerClient{clientRuns: newClientRuns[command.Consumer, *consumerRun](name), g: g}
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

// --- commands

func (groupsFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	g := r.w.groups
	switch c := cmd.(type) {
	case command.Consumer:
		return clientCommand(ctx, r, g, c.Action, c.Client, c, consumerWords)
	case command.Seek:
		return g.seek(ctx, r, c)
	case command.Stall:
		return g.stall(r, c)
	}
	return fmt.Errorf("%s: the consumer groups have no handler for this command", cmd.Name())
}

// consumerWords are what a consumer's start, restart and stop say.
var consumerWords = clientWords{started: "joined", usage: "group=GROUP topic=TOPIC", restarted: "it rejoined"}

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

// merged lays a restart's options over the command a client was started
// with (a start: restarts store what they started with); crash= is armed
// only when the restart gives it (a crash fires once).
func (g *groupSet) merged(prev, c command.Consumer) command.Consumer {
	out := prev
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
	out.Options = clients.MergeOptions(out.Options, c.Options)
	return out
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
	policy := clients.PolicyOf(cmd.Options)
	session := g.sessionFor(cmd.Session)
	held := &heldOffsets{}
	cfg := broker.ConsumerConfig{ClientID: cc.name, Group: cmd.Group, Topics: []string{cmd.Topic}, SessionTimeout: session,
		MaxPollRecords: consumerPollRecords, OnRevoke: held.revoked}
	if cmd.From == "latest" {
		cfg.ResetPolicy = broker.ResetLatest
	}
	cfg.MaxPollRecords = pollRecords(policy.Rate)
	ctx, cancel := g.w.bind(ctx)
	defer cancel()
	// A rejoin waits for every member to rejoin or for the longest session
	// to run out (a crashed member never rejoins).
	ctx, cancel2 := context.WithTimeout(ctx, 2*session+g.w.adminTimeout())
	defer cancel2()
	cn, err := g.w.cluster.NewConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	ru := &consumerRun{clientRun: newClientRun(g.l, g.w, &cc.clientCore, policy), cc: cc, cn: cn, cmd: cmd, session: session, pending: held}
	if !launchRun(&g.clientSet, &cc.clientRuns, cmd, cmd.Options.Crash, ru, nil) {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}

	text := fmt.Sprintf("%s %s group %s (generation %d) reading %s: %s", cc.name, how, cmd.Group, cn.Generation(), cmd.Topic, describeAssignment(cn.Assignment()))
	text += "; " + describeConsumer(policy, cmd)
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
func describeConsumer(p clients.Policy, cmd command.Consumer) string {
	retries := ""
	if p.Retry != "none" {
		retries = fmt.Sprintf("retry=%s up to %d attempts", p.Retry, p.MaxAttempts)
		if p.Retry == "backoff" {
			retries += fmt.Sprintf(" (base %v, cap %v, jitter %s)", p.Base, p.Cap, p.Jitter)
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
	return p.Describe(settles, "records", retries, cmd.Options.Crash)
}

func (cc *consumerClient) where() string {
	cmd := cc.command()
	return fmt.Sprintf("group %s, topic %s", cmd.Group, cmd.Topic)
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
	to, err := g.seekTarget(c.To)
	if err != nil {
		return err
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
	w.kafka.Seeked(c.Group, tp, off)
	r.say(EventOutcome, "%s", g.seekText(c.Group, tp, off, reached))
	return nil
}

// seekTarget is where a seek's to= points, for the broker.
func (g *groupSet) seekTarget(to command.SeekTo) (broker.SeekTarget, error) {
	switch to.Kind {
	case command.SeekOffset:
		return broker.SeekOffset(to.Offset), nil
	case command.SeekEarliest:
		return broker.SeekEarliest, nil
	case command.SeekLatest:
		return broker.SeekLatest, nil
	case command.SeekTime:
		return broker.SeekTime(to.Time), nil
	case command.SeekAgo:
		return broker.SeekTime(g.l.clock.Now().Add(-to.Ago)), nil
	}
	return broker.SeekTarget{}, fmt.Errorf("seek: to=%s is not a seek target", to)
}

// seekText tells the learner what a seek of group on tp to off did, with
// reached the offset the group had read up to.
func (g *groupSet) seekText(group string, tp broker.TopicPartition, off, reached int64) string {
	owner := ""
	if gs, err := g.groupState(group); err == nil {
		for _, ps := range gs.Partitions {
			if ps.TopicPartition == tp {
				owner = ps.Owner
			}
		}
	}
	text := fmt.Sprintf("group %s now reads %s from offset %d", group, tp, off)
	if off < reached {
		text += fmt.Sprintf("; offsets %d–%d come again, as replays, not duplicates", off, reached-1)
	} else if off > reached {
		text += fmt.Sprintf("; offsets %d–%d are skipped", reached, off-1)
	}
	if owner != "" {
		return text + fmt.Sprintf(" (%s moves there at its next heartbeat)", owner)
	}
	return text + " (whoever owns it next starts there)"
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

// sessionFor is a consumer's session timeout: the one it asked for, else
// the session of the lab's timing, the broker's default. While
// the lab is hurried (Hurry) the fast preset's, so a crash in a replayed
// step is not waited out at classroom length; a member keeps the session
// it joined with, as a Kafka member does.
func (g *groupSet) sessionFor(asked time.Duration) time.Duration {
	switch {
	case asked > 0:
		return asked
	case g.l.hurry.Load():
		return min(g.w.timing.SessionTimeout, broker.FastTiming.SessionTimeout)
	}
	return g.w.timing.SessionTimeout
}
