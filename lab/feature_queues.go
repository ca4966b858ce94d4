package lab

// The queues feature: the broker's work queues (Cluster.CreateQueue and
// queue clients), driven by `queue create`, `send`, `worker
// start|restart|stop`, `redrive`, and the values depth(Q), inflight(Q),
// oldest_age(Q), delivered(Q), processed(Q), leader(Q) and state(WORKER).
//
// A worker is a goroutine the lab owns, receiving one message at a time.
// For each it runs the lab's order of work: receive → ack if ack=before → the
// before-work crash point → the work → the after-work crash point → ack if
// ack=after. A crash stops the worker as if its process died: it settles
// nothing more, and the message it held comes back after its visibility
// timeout with a higher receive count. The work is the client's simulated
// failures (fail=) and, with service=NAME, the service's Handle, with the
// same policy types as consumers (client_policy.go). A failed attempt is
// given back to the queue with a nack: at once with retry=none or
// immediate, after the backoff with retry=backoff; its receive count is
// the attempt number. A permanent failure, or the last of max-attempts
// with a retry policy, moves the message to the dead-letter queue at
// once; with retry=none the queue's own max-receives decides.
//
// Every send goes into the checker's history with its outcome, every
// delivery with its queue; the first delivery of a redriven message is a
// replay, not a duplicate. At check time each message's fate is read from
// the queues (held, or dead-lettered when held by a dead-letter queue) and
// from the acks and expiries the broker reported.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// receivePoll is the wall-time long poll of a worker's receive: short, so
// that a stop is quick and a paused clock is noticed.
const receivePoll = 100 * time.Millisecond

// workerReceiveMax bounds the messages one receive hands a worker with a
// rate.
const workerReceiveMax = 10

// keyAttribute is the message attribute that carries a send's key=.
const keyAttribute = "key"

// QueueSend is one message a client put on a queue, and what became of it.
type QueueSend struct {
	MsgID    string          `json:"msg_id"`
	Client   string          `json:"client"`
	Queue    string          `json:"queue"`
	Key      string          `json:"key,omitempty"`
	Value    string          `json:"value"`
	Delay    time.Duration   `json:"delay,omitempty"`
	Seq      uint64          `json:"seq,omitempty"` // its number in the queue, once accepted
	Outcome  checker.Outcome `json:"outcome"`
	Err      string          `json:"error,omitempty"`
	Attempts int             `json:"attempts,omitempty"`
	Sent     time.Time       `json:"sent"` // lab time
	Answered time.Time       `json:"answered,omitempty"`
}

// QueueDelivery is one message handed to a worker.
type QueueDelivery struct {
	MsgID        string    `json:"msg_id"`
	Client       string    `json:"client"`
	Queue        string    `json:"queue"`
	Seq          uint64    `json:"seq"`
	Key          string    `json:"key,omitempty"`
	ReceiveCount int       `json:"receive_count"`
	Replay       bool      `json:"replay,omitempty"` // the first delivery after a redrive
	Time         time.Time `json:"time"`             // lab time
}

// WorkerState is one worker as the screens show it; its queue is in
// Snapshot.Cluster.Queues.
type WorkerState struct {
	Name         string `json:"name"`
	Queue        string `json:"queue"`
	State        string `json:"state"`   // up, crashed or stopped
	Started      string `json:"started"` // the command that (re)started it
	Service      string `json:"service,omitempty"`
	Waiting      string `json:"waiting,omitempty"`
	Holding      string `json:"holding,omitempty"` // a message received and not yet settled
	Received     int    `json:"received"`
	Processed    int    `json:"processed"`
	Failures     int    `json:"failures"`
	Acks         int    `json:"acks"`
	AckErrors    int    `json:"ack_errors"`
	Nacks        int    `json:"nacks"`
	DeadLettered int    `json:"dead_lettered"` // moved to the DLQ by this worker
	LastError    string `json:"last_error,omitempty"`
	Crash        string `json:"crash,omitempty"` // the armed crash point
}

// queuesFeature is the queues' family of commands and values.
type queuesFeature struct{}

// queueSet is one world's queue clients, workers and what they did.
type queueSet struct {
	clientSet[*worker] // delivered and processed by queue

	// Guarded by mu.
	senders    map[string]*broker.QueueClient
	sends      []*QueueSend
	deliveries []QueueDelivery
	acked      map[string]bool // message ids some queue acked
	expired    map[string]bool // message ids some queue dropped by TTL

	finished ackTimes // when the workers' acks landed, for throughput(Q) (throughput.go)
}

func newQueueSet(l *Lab, w *world) *queueSet {
	return &queueSet{clientSet: newClientSet[*worker](l, w, "worker"), senders: map[string]*broker.QueueClient{},
		acked: map[string]bool{}, expired: map[string]bool{}}
}

// worker is one named worker; each start or restart is a new run with a
// new queue client. The worker keeps its name, counts and state.
type worker struct {
	clientRuns[command.Worker, *workerRun]
	qs *queueSet

	// Guarded by mu.
	holding string // the message the current run has received and not settled
	stats   workerStats
}

type workerStats struct {
	received, acks, ackErrors, nacks, deadLettered int
}

type workerRun struct {
	clientRun
	wk  *worker
	qc  *broker.QueueClient
	cmd command.Worker
	dlq bool // its queue has a dead-letter queue

	maxReceives int // its queue's max-receives: a nack at that receive dead-letters (0: none)
}

// note takes what the checker needs from the broker's events: which
// messages were acked or expired. Called with the timeline lock held.
func (qs *queueSet) note(e broker.Event) {
	if qs == nil || e.MsgID == "" {
		return
	}
	switch e.Kind {
	case broker.EventQueueAck:
		qs.mu.Lock()
		qs.acked[e.MsgID] = true
		qs.mu.Unlock()
	case broker.EventQueueExpire:
		qs.mu.Lock()
		qs.expired[e.MsgID] = true
		qs.mu.Unlock()
	}
}

// --- queues as the cluster holds them

// queueState returns a queue's state, or an error naming the queues there are.
func (w *world) queueState(name string) (broker.QueueState, error) {
	var names []string
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			return q, nil
		}
		names = append(names, q.Config.Name)
	}
	if _, err := w.topic(name); err == nil {
		return broker.QueueState{}, fmt.Errorf("%w %q: %s is a topic, not a queue", broker.ErrUnknownQueue, name, name)
	}
	if len(names) == 0 {
		return broker.QueueState{}, fmt.Errorf("%w %q: there are no queues yet; create one with queue create %s", broker.ErrUnknownQueue, name, name)
	}
	return broker.QueueState{}, fmt.Errorf("%w %q; the queues are %s%s", broker.ErrUnknownQueue, name, strings.Join(names, ", "), didYouMean(name, names))
}

func (w *world) isQueue(name string) bool {
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		if q.Config.Name == name {
			return true
		}
	}
	return false
}

// queueValue reads leader(Q) or epoch(Q).
func (w *world) queueValue(v command.Value) (any, error) {
	q, err := w.queueState(v.Target.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	switch v.Func {
	case "leader":
		return orNone(q.Leader), nil
	case "epoch":
		if v.Node != "" {
			for _, r := range q.Replicas {
				if r.Node == v.Node {
					if !r.Up {
						return nil, notNow{fmt.Errorf("%s: %s is down", v, v.Node)}
					}
					return float64(r.Epoch), nil
				}
			}
			return nil, fmt.Errorf("%s: %s holds no replica of %s", v, v.Node, q.Config.Name)
		}
		if q.Epoch == 0 {
			return nil, notNow{fmt.Errorf("%s: no replica of %s is up", v, q.Config.Name)}
		}
		return float64(q.Epoch), nil
	}
	return nil, fmt.Errorf("%s: %s is a queue; %s is read from a partition (depth, inflight and oldest_age are a queue's)", v, q.Config.Name, v.Func)
}

// resolveQueue resolves leader(Q) and follower(Q).
func (w *world) resolveQueue(ref command.NodeRef) (string, error) {
	q, err := w.queueState(ref.Of.Name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	return leaderOrFollower(ref, q.Leader, q.Replicas, func(r broker.QueueReplicaState) (string, bool) { return r.Node, r.Up })
}

// --- commands

func (queuesFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	qs := r.w.queues
	switch c := cmd.(type) {
	case command.QueueCreate:
		return qs.create(ctx, r, c)
	case command.Send:
		return qs.send(ctx, r, c)
	case command.Worker:
		switch c.Action {
		case command.ActionStart:
			return qs.start(ctx, r, c)
		case command.ActionRestart:
			return qs.restart(ctx, r, c)
		case command.ActionStop:
			return qs.stop(r, c.Client, c.String(), qs.stopped)
		}
	case command.Redrive:
		return qs.redrive(ctx, r, c)
	}
	return fmt.Errorf("%s: the queues have no handler for this command", cmd.Name())
}

func (qs *queueSet) create(ctx context.Context, r *run, c command.QueueCreate) error {
	w := qs.w
	verb := "queue create " + c.Queue
	if _, err := w.topic(c.Queue); err == nil {
		return fmt.Errorf("%s: %w: %q is a topic", verb, broker.ErrQueueExists, c.Queue)
	}
	if w.isQueue(c.Queue) {
		return fmt.Errorf("%s: %w: %q", verb, broker.ErrQueueExists, c.Queue)
	}
	nodes := len(w.cluster.Nodes())
	if c.RF > nodes {
		return fmt.Errorf("%s: rf=%d but the cluster has %d nodes", verb, c.RF, nodes)
	}
	if c.MaxReceives > 0 && c.DLQ == "" {
		return fmt.Errorf("%s: max-receives=%d needs a dead-letter queue to move messages to; add dlq=%s-dlq", verb, c.MaxReceives, c.Queue)
	}
	if c.DLQ == c.Queue && c.DLQ != "" {
		return fmt.Errorf("%s: a queue cannot be its own dead-letter queue", verb)
	}
	if c.DLQ != "" {
		if _, err := w.topic(c.DLQ); err == nil {
			return fmt.Errorf("%s: dlq=%s is a topic; name a queue", verb, c.DLQ)
		}
	}
	r.begin(c.String())
	cfg := broker.QueueConfig{Name: c.Queue, RF: c.RF, Visibility: c.Visibility, MaxReceives: c.MaxReceives, DLQ: c.DLQ,
		MaxLength: c.MaxLength, TTL: c.TTL}
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, w.adminTimeout())
	defer cancel2()
	if err := w.cluster.CreateQueue(ctx, cfg); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	q, err := w.queueState(c.Queue)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("rf %d", len(q.Replicas)), fmt.Sprintf("visibility %v", q.Config.Visibility))
	if q.Config.DLQ != "" {
		if q.Config.MaxReceives > 0 {
			parts = append(parts, fmt.Sprintf("after %d receives a message moves to %s", q.Config.MaxReceives, q.Config.DLQ))
		} else {
			parts = append(parts, "dead-letter queue "+q.Config.DLQ)
		}
	}
	if q.Config.MaxLength > 0 {
		parts = append(parts, fmt.Sprintf("holds at most %d (more sends are rejected)", q.Config.MaxLength))
	}
	if q.Config.TTL > 0 {
		parts = append(parts, fmt.Sprintf("messages expire after %v", q.Config.TTL))
	}
	r.say(EventOutcome, "queue %s: %s; leader %s", c.Queue, strings.Join(parts, ", "), orNone(q.Leader))
	return nil
}

// sender returns the queue client a named client sends with, registering
// the client as the producers' are.
func (qs *queueSet) sender(name string) (*client, *broker.QueueClient, error) {
	w := qs.w
	qs.mu.Lock()
	qc := qs.senders[name]
	qs.mu.Unlock()
	if qc == nil {
		var err error
		qc, err = w.cluster.NewQueueClient(broker.QueueClientConfig{ClientID: name})
		if err != nil {
			return nil, nil, err
		}
		qs.mu.Lock()
		if prev := qs.senders[name]; prev != nil {
			qc = prev
		} else {
			qs.senders[name] = qc
		}
		qs.mu.Unlock()
	}
	w.mu.Lock()
	cl := w.clients[name]
	if cl == nil {
		cl = newClient(name)
		w.clients[name] = cl
	}
	w.mu.Unlock()
	return cl, qc, nil
}

func (qs *queueSet) send(ctx context.Context, r *run, c command.Send) error {
	w := qs.w
	if _, err := w.queueState(c.Queue); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	name := c.As
	if name == "" {
		name = defaultProducer
	}
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("send: client names cannot start with '_'")
	}
	if c.Count < 1 {
		return fmt.Errorf("send: count=%d: send at least one message", c.Count)
	}
	cl, qc, err := qs.sender(name)
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	r.begin(c.String())
	now := qs.l.clock.Now()
	msgs := make([]broker.QueueMessage, c.Count)
	recs := make([]*QueueSend, c.Count)
	for i := range msgs {
		id := cl.nextID()
		v := id
		if c.HasValue {
			v = template(c.Value, i+1)
		}
		msgs[i] = broker.QueueMessage{Body: []byte(v), Delay: c.Delay, MsgID: id}
		recs[i] = &QueueSend{MsgID: id, Client: name, Queue: c.Queue, Value: v, Delay: c.Delay, Outcome: checker.Pending, Sent: now}
		if c.Keyed {
			// The key travels as an attribute: a queue hands messages out
			// by arrival, whatever their key.
			recs[i].Key = template(c.Key, i+1)
			msgs[i].Attributes = map[string]string{keyAttribute: recs[i].Key}
		}
	}
	qs.mu.Lock()
	qs.sends = append(qs.sends, recs...)
	qs.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	res := qc.Send(ctx, c.Queue, msgs...)
	qs.settleSends(recs, res, qs.l.clock.Now())
	qs.mu.Lock()
	out := make([]QueueSend, len(recs))
	for i, s := range recs {
		out[i] = *s
	}
	qs.mu.Unlock()
	if len(out) <= listEach {
		for _, s := range out {
			r.say(EventOutcome, "%s", describeSend(s))
		}
		return nil
	}
	counts := map[checker.Outcome]int{}
	for _, s := range out {
		counts[s.Outcome]++
	}
	var parts []string
	for _, o := range []checker.Outcome{checker.Acknowledged, checker.Rejected, checker.Failed, checker.Unknown, checker.Pending} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	text := fmt.Sprintf("%d messages from %s to %s: %s", len(out), name, c.Queue, strings.Join(parts, ", "))
	if counts[checker.Rejected] > 0 {
		text += "; the queue was full and refused the rest (back-pressure)"
	}
	r.say(EventOutcome, "%s", text)
	return nil
}

func describeSend(s QueueSend) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → ", s.MsgID, s.Queue)
	switch s.Outcome {
	case checker.Acknowledged:
		fmt.Fprintf(&b, "accepted as message %d", s.Seq)
		if s.Delay > 0 {
			fmt.Fprintf(&b, ", invisible for %v", s.Delay)
		}
	case checker.Rejected:
		b.WriteString("rejected: the queue is full (back-pressure)")
	default:
		b.WriteString(string(s.Outcome))
		if s.Err != "" {
			b.WriteString(": " + s.Err)
		}
	}
	if s.Attempts > 1 {
		fmt.Fprintf(&b, "; %d attempts", s.Attempts)
	}
	return b.String()
}

func (qs *queueSet) redrive(ctx context.Context, r *run, c command.Redrive) error {
	w := qs.w
	q, err := w.queueState(c.DLQ)
	if err != nil {
		return fmt.Errorf("redrive: %w", err)
	}
	if c.To != "" {
		if _, err := w.queueState(c.To); err != nil {
			return fmt.Errorf("redrive: to=%s: %w", c.To, err)
		}
	} else if len(q.DeadLetterFor) == 0 && q.Counts.Depth() > 0 {
		return fmt.Errorf("redrive: %s is no queue's dead-letter queue; say where its messages go with to=QUEUE", c.DLQ)
	}
	r.begin(c.String())
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, w.adminTimeout())
	defer cancel2()
	n, err := w.cluster.Redrive(ctx, c.DLQ, c.To)
	if err != nil {
		return fmt.Errorf("redrive %s: %w", c.DLQ, err)
	}
	to := c.To
	if to == "" {
		to = "the queues they came from"
	}
	r.say(EventOutcome, "redrive moved %d message(s) from %s back to %s; their next deliveries are replays you asked for, not duplicates", n, c.DLQ, to)
	return nil
}

// --- workers

// get is the worker of a name, or nil.
func (qs *queueSet) get(name string) *worker {
	if qs == nil {
		return nil
	}
	return qs.clientSet.get(name)
}

func (qs *queueSet) has(name string) bool { return qs.get(name) != nil }

func (qs *queueSet) checkStart(verb string, c command.Worker) error {
	if err := checkClientName(verb, c.Client); err != nil {
		return err
	}
	if _, err := qs.w.queueState(c.Queue); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return qs.w.checkClientOptions(verb, c.Options)
}

func (qs *queueSet) start(ctx context.Context, r *run, c command.Worker) error {
	verb := "worker start " + c.Client
	if err := qs.claim(verb, c.Client); err != nil {
		return err
	}
	defer qs.release(c.Client)
	if err := qs.free(verb, c.Client); err != nil {
		return err
	}
	if err := qs.checkStart(verb, c); err != nil {
		return err
	}
	r.begin(c.String())
	fresh := func() *worker {
		wk := &worker{qs: qs}
		wk.name, wk.state = c.Client, ClientStopped
		return wk
	}
	return qs.launchNamed(c.Client, fresh, func(wk *worker) error { return wk.launch(r, c, "started") })
}

func (qs *queueSet) restart(_ context.Context, r *run, c command.Worker) error {
	verb := "worker restart " + c.Client
	if err := qs.claim(verb, c.Client); err != nil {
		return err
	}
	defer qs.release(c.Client)
	wk, err := qs.named(verb, c.Client, "queue=QUEUE")
	if err != nil {
		return err
	}
	next := wk.command()
	next.Action = command.ActionStart
	if c.Queue != "" {
		next.Queue = c.Queue
	}
	next.Options = mergeOptions(next.Options, c.Options)
	if err := qs.checkStart(verb, next); err != nil {
		return err
	}
	r.begin(c.String())
	was := wk.haltUp()
	return wk.launch(r, next, fmt.Sprintf("was %s; it started again", was))
}

// stopped tells the learner what becomes of the message a stopped worker
// held.
func (qs *queueSet) stopped(r *run, wk *worker, was string) {
	wk.mu.Lock()
	held := wk.holding
	wk.holding = ""
	wk.mu.Unlock()
	text := wk.name + " stopped"
	if was == ClientCrashed {
		text += "; it had crashed"
	}
	if held != "" {
		text += fmt.Sprintf("; %s, which it held unfinished, comes back when its visibility timeout runs out", held)
	}
	r.say(EventOutcome, "%s", text)
}

// launch starts a run of the worker with cmd. On failure the worker keeps
// its state and is not registered if new.
func (wk *worker) launch(r *run, cmd command.Worker, how string) error {
	qs := wk.qs
	verb := fmt.Sprintf("worker %s %s", cmd.Action, wk.name)
	policy := policyOf(cmd.Options)
	q, err := qs.w.queueState(cmd.Queue)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	// No prefetch cap: the broker counts a cap per consumer name, and a
	// restarted worker must not wait for what its crashed run held.
	qc, err := qs.w.cluster.NewQueueClient(broker.QueueClientConfig{ClientID: wk.name})
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	ru := &workerRun{clientRun: newClientRun(qs.l, qs.w, &wk.clientCore, policy), wk: wk, qc: qc, cmd: cmd, dlq: q.Config.DLQ != "",
		maxReceives: q.Config.MaxReceives}
	if !launchRun(&qs.clientSet, &wk.clientRuns, cmd, cmd.Options.Crash, ru, func() { wk.holding = "" }) {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	r.say(EventOutcome, "%s %s on queue %s (visibility %v); %s", wk.name, how, cmd.Queue, q.Config.Visibility, policy.describeWorker(cmd, ru.dlq))
	return nil
}

// describeWorker says how a worker works, in a few words.
func (p clientPolicy) describeWorker(cmd command.Worker, dlq bool) string {
	retries := ""
	switch {
	case p.fail.Kind == "" && p.service == "":
		// Nothing fails: no retry policy to speak of.
	case p.retry == "none":
		retries = "a failed message is nacked and the queue's max-receives decides when it is dead-lettered"
	default:
		retries = fmt.Sprintf("retry=%s up to %d attempts (nack", p.retry, p.maxAttempts)
		if p.retry == "backoff" {
			retries += fmt.Sprintf(" with a delay: base %v, cap %v, jitter %s", p.base, p.cap, p.jitter)
		}
		retries += ")"
		if dlq {
			retries += ", then the dead-letter queue"
		}
	}
	return p.describe("acks each message", "messages", retries, cmd.Options.Crash)
}

func (wk *worker) where() string { return "queue " + wk.command().Queue }

// leave has nothing to say: a queue client holds no membership.
func (ru *workerRun) leave() error { return nil }

// vanish has nothing to drop: what the run held comes back after its
// visibility timeout.
func (ru *workerRun) vanish() {}

// --- the worker's work

func (ru *workerRun) loop() {
	// One message at a time, unless a rate asks for throughput: then up
	// to a tenth of a second's worth per receive, as consumers poll.
	batch := 1
	if ru.opts.rate > 0 {
		batch = max(1, min(workerReceiveMax, int(ru.opts.rate/10)))
	}
	ru.clientRun.loop(func() (bool, error) {
		ds, err := ru.qc.Receive(ru.soft, ru.cmd.Queue, batch, 0, receivePoll)
		if err != nil {
			return false, err
		}
		for _, d := range ds {
			if !ru.handle(d) {
				return true, nil
			}
		}
		if len(ds) < batch {
			ru.pacer.rest() // caught up: no backlog to catch up on
		}
		return false, nil
	}, func(err error) bool { return errors.Is(err, broker.ErrClosed) })
}

// handle runs the worker's work for one message; false means the run is
// over (crashed or stopped).
func (ru *workerRun) handle(d broker.Delivery) bool {
	wk, qs := ru.wk, ru.wk.qs
	if !ru.pacer.wait(ru.soft, qs.l.clock, ru.opts.rate) {
		return false // stopped: the message comes back after its visibility timeout
	}
	qs.deliver(wk, d, qs.l.clock.Now())
	// A message given up on has been settled: nacked or dead-lettered.
	if !ru.process(&wk.clientCore, queueMessage{ru, d}, false) {
		return false
	}
	wk.mu.Lock()
	wk.holding = ""
	wk.mu.Unlock()
	return true
}

// queueMessage is a message in a worker's hands.
type queueMessage struct {
	ru *workerRun
	d  broker.Delivery
}

func (qm queueMessage) ack() { qm.ru.ack(qm.d) }

// work makes one attempt at the message (waiting while its service is not
// running) and, if it fails, settles it as the policy says.
func (qm queueMessage) work() workResult {
	ru, d := qm.ru, qm.d
	wk, qs := ru.wk, ru.wk.qs
	msg := services.Message{ID: d.MsgID, Value: string(d.Body)}
	wait := time.Duration(0)
	err, stopped := ru.try(&wk.clientCore, msg, &wait, func() {
		qs.event(false, "%s waits for %s, which is not running: it holds %s, which comes back to the queue if its visibility timeout runs out first",
			wk.name, ru.opts.service, d.MsgID)
	})
	switch {
	case stopped:
		return workStopped
	case err == nil:
		qs.processedBy(&wk.clientCore, wk.queueOf(d), d.MsgID, "", d.Attributes[keyAttribute])
		if wait > 0 {
			wk.setWaiting("")
		}
		return workDone
	case errors.Is(err, services.ErrCrashed):
		ru.crashNow(fmt.Sprintf("%s crashed with %s while working on %s: %v", wk.name, ru.opts.service, d.MsgID, err))
		return workCrashed
	}
	wk.failed(err)
	ru.settleFailure(d, err)
	return workGivenUp
}

// settleFailure gives a failed message back, or dead-letters it.
func (ru *workerRun) settleFailure(d broker.Delivery, err error) {
	wk, qs := ru.wk, ru.wk.qs
	if ru.opts.ackBefore {
		qs.event(false, "%s failed on %s (receive %d): %v; it acked before the work, so the message is gone", wk.name, d.MsgID, d.ReceiveCount, err)
		return
	}
	permanent := errors.Is(err, errPermanent) || errors.Is(err, services.ErrBadMessage)
	last := ru.opts.retry != "none" && d.ReceiveCount >= ru.opts.maxAttempts
	if permanent || last {
		why := fmt.Sprintf("after %d attempts", d.ReceiveCount)
		if permanent {
			why = "at once: the failure is permanent, retrying cannot help"
		}
		if !ru.dlq {
			// Nowhere to put it: give it back; the queue keeps it.
			ru.nackRetry(d, 0, err)
			qs.event(false, "%s gave up on %s %s: %v; queue %s has no dead-letter queue, so it is given back", wk.name, d.MsgID, why, err, ru.cmd.Queue)
			return
		}
		ctx, cancel := context.WithTimeout(ru.hard, qs.w.timing.RequestTimeout)
		defer cancel()
		if derr := ru.qc.DeadLetter(ctx, ru.cmd.Queue, d.ReceiptHandle, err.Error()); derr != nil {
			qs.event(false, "%s could not dead-letter %s: %v; it comes back after its visibility timeout", wk.name, d.MsgID, derr)
			return
		}
		wk.mu.Lock()
		wk.stats.deadLettered++
		wk.mu.Unlock()
		qs.event(false, "%s moved %s to the dead-letter queue %s: %v", wk.name, d.MsgID, why, err)
		return
	}
	delay := ru.opts.backoff(d.ReceiveCount, ru.rng)
	ru.nackRetry(d, delay, err)
	qs.event(true, "%s attempt %d on %s failed: %v; nacked, back in the queue in %v", wk.name, d.ReceiveCount, d.MsgID, err, delay.Round(time.Millisecond))
}

// nackRetry gives a failed message back to be tried again after delay,
// and records the retry unless the queue dead-letters it on this nack.
func (ru *workerRun) nackRetry(d broker.Delivery, delay time.Duration, reason error) {
	failed := ru.clock.Now()
	if !ru.nack(d, delay, reason) || ru.maxReceives > 0 && d.ReceiveCount >= ru.maxReceives {
		return
	}
	ru.w.retried(ru.wk.queueOf(d), ru.wk.name, d.MsgID, d.ReceiveCount+1, failed, delay)
}

// nack gives a message back to the queue; false when the nack failed.
func (ru *workerRun) nack(d broker.Delivery, delay time.Duration, reason error) bool {
	wk, qs := ru.wk, ru.wk.qs
	ctx, cancel := context.WithTimeout(ru.hard, qs.w.timing.RequestTimeout)
	defer cancel()
	err := ru.qc.Nack(ctx, ru.cmd.Queue, d.ReceiptHandle, delay, reason.Error())
	wk.mu.Lock()
	if err == nil {
		wk.stats.nacks++
	} else {
		wk.lastErr = err.Error()
	}
	wk.mu.Unlock()
	if err != nil && ru.hard.Err() == nil {
		qs.event(false, "%s's nack of %s failed: %v; it comes back after its visibility timeout", wk.name, d.MsgID, err)
	}
	return err == nil
}

func (ru *workerRun) ack(d broker.Delivery) {
	wk, qs := ru.wk, ru.wk.qs
	err, gone := ru.settle(&wk.clientCore, &wk.stats.acks, &wk.stats.ackErrors, func(ctx context.Context) error {
		return ru.qc.Ack(ctx, ru.cmd.Queue, d.ReceiptHandle)
	})
	if gone {
		return
	}
	if err == nil {
		qs.mu.Lock()
		qs.acked[d.MsgID] = true
		qs.mu.Unlock()
		qs.finished.add(wk.queueOf(d), qs.l.clock.Now())
		return
	}
	why := err.Error()
	if errors.Is(err, broker.ErrStaleReceipt) || errors.Is(err, broker.ErrUnknownReceipt) {
		why = "its visibility timeout ran out first, so the queue has given it to another delivery: " + why
	}
	qs.event(false, "%s's ack of %s failed: %s", wk.name, d.MsgID, why)
}

var workerCrashNotes = crashNotes{
	beforeWorkAcked: "it acked before the work, so nobody will process it",
	beforeWork:      "neither processed nor acked, so it comes back after its visibility timeout",
	afterWorkAcked:  "the work is done and it was acked before; nothing is lost or repeated",
	afterWork:       "the work is done but not acked, so it comes back after its visibility timeout and is processed again",
}

// crash crashes the worker at its armed crash point.
func (qm queueMessage) crash(at string) {
	qm.ru.crashNow(fmt.Sprintf("%s crashed at %s of %s (receive %d): %s", qm.ru.wk.name, at, qm.d.MsgID, qm.d.ReceiveCount,
		workerCrashNotes.at(at, qm.ru.opts.ackBefore)))
}

// crashNow stops the run as if its process died: nothing more is settled.
func (ru *workerRun) crashNow(text string) {
	wk := ru.wk
	wk.crashed()
	wk.qs.event(false, "%s (worker restart %s brings it back)", text, wk.name)
}

// queueOf is the queue a delivery came from.
func (wk *worker) queueOf(d broker.Delivery) string {
	if d.Queue != "" {
		return d.Queue
	}
	return wk.command().Queue
}

// deliver records one delivery; the first after a redrive is a replay.
func (qs *queueSet) deliver(wk *worker, d broker.Delivery, now time.Time) {
	qd := QueueDelivery{MsgID: d.MsgID, Client: wk.name, Queue: wk.queueOf(d), Seq: d.Seq, Key: d.Attributes[keyAttribute], ReceiveCount: d.ReceiveCount,
		Replay: d.Redrives > 0 && d.ReceiveCount == 1, Time: now}
	qs.mu.Lock()
	qs.deliveries = append(qs.deliveries, qd)
	qs.delivered[qd.Queue]++
	qs.mu.Unlock()
	wk.mu.Lock()
	wk.stats.received++
	wk.holding = d.MsgID
	wk.mu.Unlock()
	note := ""
	switch {
	case qd.Replay:
		note = " (a redrive replay)"
	case d.ReceiveCount > 1:
		note = " (delivered before)"
	}
	qs.event(true, "%s received %s from %s, receive count %d%s", wk.name, d.MsgID, qd.Queue, d.ReceiveCount, note)
}

// --- values and the checker

func (queuesFeature) value(_ context.Context, w *world, v command.Value) (any, bool, error) {
	qs := w.queues
	switch v.Func {
	case "depth", "inflight", "oldest_age", "throughput":
		q, err := w.queueState(v.Arg)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", v, err)
		}
		switch v.Func {
		case "throughput":
			return qs.finished.perSecond(v.Arg, qs.l.clock.Now()), true, nil
		case "depth":
			return float64(q.Counts.Depth()), true, nil
		case "inflight":
			return float64(q.Counts.InFlight), true, nil
		}
		return q.OldestAge.Seconds(), true, nil
	case "delivered", "processed", "workers":
		if !w.isQueue(v.Arg) {
			return nil, false, nil
		}
		delivered, processed, workers, _ := qs.counts(v.Arg)
		switch v.Func {
		case "processed":
			return float64(processed), true, nil
		case "workers":
			return float64(workers), true, nil
		}
		return float64(delivered), true, nil
	case "state":
		if wk := qs.get(v.Arg); wk != nil {
			return wk.stateNow(), true, nil
		}
	}
	return nil, false, nil
}

// observe hands the checker every send, every delivery, and each queue
// message's fate.
func (queuesFeature) observe(ctx context.Context, w *world, h *checker.History, o *checker.Observed) error {
	qs := w.queues
	qs.l.syncBroker(w) // the acks and expiries reported so far
	qs.mu.Lock()
	for _, s := range qs.sends {
		h.Sends = append(h.Sends, checker.Send{MsgID: s.MsgID, Client: s.Client, Queue: s.Queue, Outcome: s.Outcome})
	}
	for _, d := range qs.deliveries {
		h.Deliveries = append(h.Deliveries, checker.Delivery{MsgID: d.MsgID, Client: d.Client, Group: d.Queue, Key: d.Key, Replay: d.Replay})
	}
	h.Done = append(h.Done, qs.doneWork...)
	if o.Fates == nil {
		o.Fates = map[string]checker.Fate{}
	}
	for id := range qs.expired {
		o.Fates[id] = checker.FateExpired
	}
	for id := range qs.acked {
		o.Fates[id] = checker.FateAcked
	}
	qs.mu.Unlock()
	var problems []string
	for _, q := range w.cluster.SnapshotWindow(0).Queues {
		msgs, err := w.readQueue(ctx, q.Config.Name)
		if err != nil {
			o.Unreadable = append(o.Unreadable, q.Config.Name)
			problems = append(problems, fmt.Sprintf("%s (%v)", q.Config.Name, err))
			continue
		}
		dlq := len(q.DeadLetterFor) > 0
		for _, m := range msgs {
			var f checker.Fate
			switch {
			case dlq:
				f = checker.FateDeadLettered
			case m.State == "in-flight":
				f = checker.FateInFlight
			case m.State == "delayed":
				f = checker.FateDelayed
			case m.State == "moving" && w.isDLQ(m.MoveTo):
				f = checker.FateDeadLettered
			default:
				f = checker.FateReady
			}
			o.Fates[m.MsgID] = f
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func (w *world) isDLQ(name string) bool {
	q, err := w.queueState(name)
	return err == nil && len(q.DeadLetterFor) > 0
}

// readQueue waits for the queue's leader and lists its messages, retrying
// until ctx ends.
func (w *world) readQueue(ctx context.Context, name string) ([]broker.QueueMessageState, error) {
	if _, err := w.cluster.WaitForQueueLeader(ctx, name); err != nil {
		return nil, err
	}
	var last error
	for {
		msgs, err := w.cluster.QueueMessages(ctx, name)
		if err == nil {
			return msgs, nil
		}
		if errors.Is(err, broker.ErrUnknownQueue) || errors.Is(err, broker.ErrClosed) {
			return nil, err
		}
		last = err
		if sleepCtx(ctx, 20*time.Millisecond) != nil {
			return nil, fmt.Errorf("gave up after %v: %w", DrainTimeout, last)
		}
	}
}

// QueueSends returns a copy of every send to a queue so far in this
// cluster, in order.
func (l *Lab) QueueSends() []QueueSend {
	w, err := l.world()
	if err != nil {
		return nil
	}
	w.queues.mu.Lock()
	defer w.queues.mu.Unlock()
	out := make([]QueueSend, len(w.queues.sends))
	for i, s := range w.queues.sends {
		out[i] = *s
	}
	return out
}

// QueueDeliveries returns a copy of every delivery to a worker so far in
// this cluster, in order.
func (l *Lab) QueueDeliveries() []QueueDelivery {
	w, err := l.world()
	if err != nil {
		return nil
	}
	w.queues.mu.Lock()
	defer w.queues.mu.Unlock()
	return slices.Clone(w.queues.deliveries)
}

// states copies the workers for a snapshot, by name.
func (qs *queueSet) states() []WorkerState {
	var out []WorkerState
	for _, name := range qs.names() {
		wk := qs.get(name)
		wk.mu.Lock()
		out = append(out, WorkerState{Name: name, Queue: wk.cmd.Queue, State: wk.state, Started: wk.cmd.String(),
			Service: wk.cmd.Options.Service, Waiting: wk.waiting, Holding: wk.holding, Received: wk.stats.received, Processed: wk.processedN,
			Failures: wk.failures, Acks: wk.stats.acks, AckErrors: wk.stats.ackErrors, Nacks: wk.stats.nacks,
			DeadLettered: wk.stats.deadLettered, LastError: wk.lastErr, Crash: wk.crash})
		wk.mu.Unlock()
	}
	return out
}

// electQueue moves a queue's leadership to a node and waits until it leads.
func (r *run) electQueue(ctx context.Context, c command.Elect) error {
	q, err := r.w.queueState(c.Target.Name)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	id, err := r.w.resolve(c.Node)
	if err != nil {
		return fmt.Errorf("elect: %w", err)
	}
	name := q.Config.Name
	var hosts, down []string
	for _, rep := range q.Replicas {
		hosts = append(hosts, rep.Node)
		if !rep.Up {
			down = append(down, rep.Node)
		}
	}
	if err := electable(id, name, hosts, down); err != nil {
		return err
	}
	r.begin(fmt.Sprintf("elect %s %s", resolved(c.Node, id), name))
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, r.w.adminTimeout())
	defer cancel2()
	if err := r.w.cluster.TransferQueueLeadership(ctx, name, id); err != nil {
		return err
	}
	q, _ = r.w.queueState(name)
	r.say(EventOutcome, "%s leads queue %s at epoch %d", orNone(q.Leader), name, q.Epoch)
	return nil
}
