package lab

// The queues feature: the broker's work queues (Cluster.CreateQueue and
// queue clients), driven by `queue create`, `send`, `worker
// start|restart|stop`, `redrive`, and the values depth(Q), inflight(Q),
// oldest_age(Q), delivered(Q), processed(Q), leader(Q) and state(WORKER).
// Here are its types and commands; a worker's run is in
// feature_queues_run.go, the values in feature_queues_values.go.
//
// A worker is a goroutine the lab owns, receiving one message at a time.
// For each it runs the lab's order of work: receive → ack if ack=before → the
// before-work crash point → the work → the after-work crash point → ack if
// ack=after. A crash stops the worker as if its process died: it settles
// nothing more, and the message it held comes back after its visibility
// timeout with a higher receive count. The work is the client's simulated
// failures (fail=) and, with service=NAME, the service's Handle, with the
// same policy as consumers (package lab/clients). A failed attempt is
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
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
)

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
	Time         time.Time `json:"time"`             // lab time the worker took it up
	// Received is the lab time the queue handed it over, when its
	// visibility timeout began: a worker's rate may hold it a while first.
	Received time.Time `json:"received"`
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
	dropped    map[string]bool // message ids a full queue dropped from its head
	staleAcks  map[string]int  // by queue: acks refused because the message had been received again
	renewals   map[string]int  // by queue: visibility deadlines its consumers moved (ChangeMessageVisibility)

	finished clients.Finished // when the workers' acks landed, for throughput(Q) (package lab/clients)
}

func newQueueSet(l *Lab, w *world) *queueSet {
	return &queueSet{clientSet: newClientSet[*worker](l, w, "worker"), senders: map[string]*broker.QueueClient{},
		acked: map[string]bool{}, expired: map[string]bool{}, dropped: map[string]bool{}, staleAcks: map[string]int{},
		renewals: map[string]int{}}
}

// fresh is a new worker, stopped until its first run.
func (qs *queueSet) fresh(name string) *worker {
	return &worker{clientRuns: newClientRuns[command.Worker, *workerRun](name), qs: qs}
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

// --- commands

func (queuesFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	qs := r.w.queues
	switch c := cmd.(type) {
	case command.QueueCreate:
		return qs.create(ctx, r, c)
	case command.QueueDelete:
		return qs.delete(ctx, r, c)
	case command.Send:
		return qs.send(ctx, r, c)
	case command.Worker:
		return clientCommand(ctx, r, qs, c.Action, c.Client, c, workerWords)
	case command.Redrive:
		return qs.redrive(ctx, r, c)
	}
	return fmt.Errorf("%s: the queues have no handler for this command", cmd.Name())
}

// workerWords are what a worker's start, restart and stop say.
var workerWords = clientWords{started: "started", usage: "queue=QUEUE", restarted: "it started again"}

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
		MaxLength: c.MaxLength, Overflow: c.Overflow, TTL: c.TTL, FIFO: c.FIFO}
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
	if q.Config.FIFO {
		parts = append(parts, "FIFO: each group in order, one of a group in flight at a time")
	}
	if q.Config.DLQ != "" {
		if q.Config.MaxReceives > 0 {
			parts = append(parts, fmt.Sprintf("after %d receives a message moves to %s", q.Config.MaxReceives, q.Config.DLQ))
		} else {
			parts = append(parts, "dead-letter queue "+q.Config.DLQ)
		}
	}
	if q.Config.MaxLength > 0 {
		if q.Config.Overflow == "drop-head" {
			parts = append(parts, fmt.Sprintf("holds at most %d (a send beyond drops the oldest ready message)", q.Config.MaxLength))
		} else {
			parts = append(parts, fmt.Sprintf("holds at most %d (more sends are rejected)", q.Config.MaxLength))
		}
	}
	if q.Config.TTL > 0 {
		parts = append(parts, fmt.Sprintf("messages expire after %v", q.Config.TTL))
	}
	r.say(EventOutcome, "queue %s: %s; leader %s", c.Queue, strings.Join(parts, ", "), orNone(q.Leader))
	return nil
}

func (qs *queueSet) delete(ctx context.Context, r *run, c command.QueueDelete) error {
	w := qs.w
	verb := "queue delete " + c.Queue
	q, err := w.queueState(c.Queue)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if len(q.DeadLetterFor) > 0 {
		return fmt.Errorf("%s: it is the dead-letter queue of %s; delete that first, or its failing messages would have nowhere to go",
			verb, strings.Join(q.DeadLetterFor, ", "))
	}
	for _, name := range qs.names() {
		if wk := qs.get(name); wk != nil && wk.stateNow() == ClientUp && wk.command().Queue == c.Queue {
			return fmt.Errorf("%s: worker %s is working it; stop it first (worker stop %s)", verb, name, name)
		}
	}
	r.begin(c.String())
	ctx, cancel := w.bind(ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(ctx, w.adminTimeout())
	defer cancel2()
	if _, err := w.cluster.DeleteQueue(ctx, c.Queue, "the lab"); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	r.say(EventOutcome, "sends to %s fail now, until a queue of that name is created again", c.Queue)
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
		if c.Group != "" {
			msgs[i].Group = template(c.Group, i+1)
		}
		if c.DedupeID != "" {
			msgs[i].DedupeID = template(c.DedupeID, i+1)
		}
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
	for i, s := range res {
		if s.Duplicate { // a FIFO queue kept the original: this send is that message
			qs.mu.Lock()
			recs[i].MsgID = s.MsgID
			qs.mu.Unlock()
			r.say(EventOutcome, "%s repeats deduplication id %s: %s dropped it and kept %s", msgs[i].MsgID, msgs[i].DedupeID, c.Queue, s.MsgID)
		}
	}
	qs.settleSends(recs, res, qs.l.clock.Now())
	qs.mu.Lock()
	out := make([]QueueSend, len(recs))
	for i, s := range recs {
		out[i] = *s
	}
	qs.mu.Unlock()
	if len(out) <= family.ListEach {
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

// merged lays a restart's options over the command a worker was started
// with (a start: restarts store what they started with).
func (qs *queueSet) merged(prev, c command.Worker) command.Worker {
	next := prev
	if c.Queue != "" {
		next.Queue = c.Queue
	}
	if c.Extend != 0 {
		next.Extend = c.Extend
	}
	next.Options = clients.MergeOptions(next.Options, c.Options)
	return next
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

// firstReceiveWait bounds how long a worker's start waits, in wall time,
// for its first receive to be answered.
const firstReceiveWait = time.Second

// launch starts a run of the worker with cmd. On failure the worker keeps
// its state and is not registered if new.
func (wk *worker) launch(ctx context.Context, r *run, cmd command.Worker, how string) error {
	qs := wk.qs
	verb := fmt.Sprintf("worker %s %s", cmd.Action, wk.name)
	policy := clients.PolicyOf(cmd.Options)
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
		maxReceives: q.Config.MaxReceives, hot: true, first: make(chan struct{})}
	ru.taken(qs.l.clock.Now()) // its first receive is asked as it starts, in lab time
	if !launchRun(&qs.clientSet, &wk.clientRuns, cmd, cmd.Options.Crash, ru, func() { wk.holding = "" }) {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	// The start returns once the worker's first receive is answered, so a
	// message sent before it is this worker's, not a worker started after
	// it. A queue with no leader to answer does not hold the start long.
	wait := time.NewTimer(firstReceiveWait)
	select {
	case <-ru.first:
	case <-ctx.Done():
	case <-wait.C:
	}
	wait.Stop()
	desc := describeWorker(policy, cmd, ru.dlq)
	if cmd.Extend > 0 {
		desc += fmt.Sprintf("; while it works it keeps the message hidden %v longer, renewed every %v", cmd.Extend, cmd.Extend/2)
	}
	r.say(EventOutcome, "%s %s on queue %s (visibility %v); %s", wk.name, how, cmd.Queue, q.Config.Visibility, desc)
	return nil
}

// describeWorker says how a worker works, in a few words.
func describeWorker(p clients.Policy, cmd command.Worker, dlq bool) string {
	retries := ""
	switch {
	case p.Fail.Kind == "" && p.Service == "":
		// Nothing fails: no retry policy to speak of.
	case p.Retry == "none":
		retries = "a failed message is nacked and the queue's max-receives decides when it is dead-lettered"
	default:
		retries = fmt.Sprintf("retry=%s up to %d attempts (nack", p.Retry, p.MaxAttempts)
		if p.Retry == "backoff" {
			retries += fmt.Sprintf(" with a delay: base %v, cap %v, jitter %s", p.Base, p.Cap, p.Jitter)
		}
		retries += ")"
		if dlq {
			retries += ", then the dead-letter queue"
		}
	}
	return p.Describe("acks each message", "messages", retries, cmd.Options.Crash)
}

func (wk *worker) where() string { return "queue " + wk.command().Queue }

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
