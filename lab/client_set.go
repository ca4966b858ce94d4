package lab

// A world's set of one kind of background client, consumers or workers:
// what names them, the start, restart and stop that serve either kind
// (each bringing its own checks and words), the close, and what the
// checker and the values read of their work.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clients"
	"github.com/mqlab/mqlab/lab/command"
)

// clientSet is one world's background clients of one kind, by name, with
// what the checker and the values read of their work.
type clientSet[C backgroundClient] struct {
	l    *Lab
	w    *world
	kind string // consumer or worker

	mu        sync.Mutex
	byName    map[string]C               // every client started in this world
	busy      map[string]bool            // a start, restart or stop is under way
	delivered map[string]int             // group or queue → deliveries
	processed map[string]map[string]bool // group or queue → message ids whose work was done
	done      clients.Finished           // group or queue → when work finished, for throughput(G)
	workers   map[string]map[string]bool // group or queue → clients that finished some work
	doneWork  []checker.Done             // finished work, in the order it finished
	closed    bool
}

// backgroundClient is a consumer or a worker, for its set: a
// *clientRuns underneath.
type backgroundClient interface {
	comparable // nil when there is none
	stateNow() string
	// where says what it works on, for a start it refuses: "group G,
	// topic T" or "queue Q".
	where() string
	halt(stop bool) error
	kill()
}

// newClientSet makes a world's set of one kind of client; kind names it
// in what the learner reads ("consumer" or "worker").
func newClientSet[C backgroundClient](l *Lab, w *world, kind string) clientSet[C] {
	return clientSet[C]{l: l, w: w, kind: kind, byName: map[string]C{}, busy: map[string]bool{}, delivered: map[string]int{},
		processed: map[string]map[string]bool{}, workers: map[string]map[string]bool{}}
}

// set is the set itself: a kind's set embeds its clientSet, and so
// gives it to the start, restart and stop that serve either kind.
func (s *clientSet[C]) set() *clientSet[C] { return s }

// claim marks a client name busy for one command; release undoes it.
func (s *clientSet[C]) claim(verb, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	if s.busy[name] {
		return fmt.Errorf("%s: another command is starting or stopping %s; try again once it has finished", verb, name)
	}
	s.busy[name] = true
	return nil
}

func (s *clientSet[C]) release(name string) {
	s.mu.Lock()
	delete(s.busy, name)
	s.mu.Unlock()
}

// claimNamed claims a name, as claim does, for a command on the client of
// that name, which must exist; hint follows the error when it does not.
func (s *clientSet[C]) claimNamed(verb, name, hint string) (C, error) {
	var none C
	if err := s.claim(verb, name); err != nil {
		return none, err
	}
	c := s.get(name)
	if c == none {
		err := fmt.Errorf("%s: no %s named %s%s%s", verb, s.kind, name, hint, didYouMean(name, s.names()))
		s.release(name)
		return none, err
	}
	return c, nil
}

// get is the client of a name, or the zero C.
func (s *clientSet[C]) get(name string) C {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name]
}

func (s *clientSet[C]) add(name string, c C) {
	s.mu.Lock()
	s.byName[name] = c
	s.mu.Unlock()
}

// names lists the clients, sorted.
func (s *clientSet[C]) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byName))
}

// free checks that a start may have name: a client of this set by that
// name must be stopped, and no client of another kind may have it.
func (s *clientSet[C]) free(verb, name string) error {
	var none C
	if c := s.get(name); c != none {
		if st := c.stateNow(); st != ClientStopped {
			return fmt.Errorf("%s: %s is already %s (%s); %s restart %s starts it again, %s stop %s ends it",
				verb, name, st, c.where(), s.kind, name, s.kind, name)
		}
		return nil
	}
	if what := s.w.nameTaken(name); what != "" {
		return fmt.Errorf("%s: %s is already %s; give the %s a name of its own", verb, name, what, s.kind)
	}
	return nil
}

// nameTaken says what other client already has a name, if any: one name,
// one client, so that a fault armed for it is clear.
func (w *world) nameTaken(name string) string {
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
	for _, ld := range w.loads.States() {
		if ld.Client == name {
			return "a load's client"
		}
	}
	if w.groups.has(name) {
		return "a consumer"
	}
	return ""
}

// clientKind is what one kind's set brings to the start, restart and stop
// of a client: its checks, a new client, a restart's options laid over
// those of the last start, and what it tells the learner of a stop. Cmd
// is the kind's start command.
type clientKind[C backgroundClient, Cmd any] interface {
	set() *clientSet[C]
	checkStart(verb string, cmd Cmd) error
	fresh(name string) C // stopped until its first run
	merged(prev, c Cmd) Cmd
	// stopped tells the learner what became of a client stopped for
	// good, from the state it was in.
	stopped(r *run, c C, was string)
}

// startable is a client that a start or restart launches with a Cmd.
type startable[Cmd any] interface {
	backgroundClient
	command() Cmd
	haltUp() (was string)
	// launch starts a run with cmd; how says in the timeline what the
	// client did ("joined", "was up; it rejoined").
	launch(ctx context.Context, r *run, cmd Cmd, how string) error
}

// clientWords are what one kind's start, restart and stop say: how a
// start ends ("joined"), what a start needs besides the name, for a
// restart of a client that does not exist, and how a restart ends.
type clientWords struct {
	started, usage, restarted string
}

// clientCommand runs a start, restart or stop of a client of kind k.
func clientCommand[C startable[Cmd], Cmd fmt.Stringer](ctx context.Context, r *run, k clientKind[C, Cmd], action, name string, cmd Cmd, say clientWords) error {
	switch action {
	case command.ActionStart:
		return startClient(ctx, r, k, name, cmd, say.started)
	case command.ActionRestart:
		return restartClient(ctx, r, k, name, cmd, say.usage, say.restarted)
	case command.ActionStop:
		return stopClient(r, k, name, cmd)
	}
	return fmt.Errorf("%s %s: %s is not start, restart or stop", k.set().kind, name, action)
}

// startClient starts the client a start names: the stopped one of that
// name, or else a new one, which joins the set only once its first run is
// launched.
func startClient[C startable[Cmd], Cmd fmt.Stringer](ctx context.Context, r *run, k clientKind[C, Cmd], name string, cmd Cmd, how string) error {
	s := k.set()
	verb := s.kind + " start " + name
	if err := s.claim(verb, name); err != nil {
		return err
	}
	defer s.release(name)
	if err := s.free(verb, name); err != nil {
		return err
	}
	if err := k.checkStart(verb, cmd); err != nil {
		return err
	}
	r.begin(cmd.String())
	var none C
	c := s.get(name)
	isNew := c == none
	if isNew {
		c = k.fresh(name)
	}
	if err := c.launch(ctx, r, cmd, how); err != nil {
		return err
	}
	if isNew {
		s.add(name, c)
	}
	return nil
}

// restartClient starts the client a restart names again, with the
// restart's options over those of its last start, halting it first if it
// is up. usage is what a start needs besides the name, for the hint when
// there is no such client.
func restartClient[C startable[Cmd], Cmd fmt.Stringer](ctx context.Context, r *run, k clientKind[C, Cmd], name string, cmd Cmd, usage, how string) error {
	s := k.set()
	verb := s.kind + " restart " + name
	c, err := s.claimNamed(verb, name, fmt.Sprintf("; start one with %s start %s %s", s.kind, name, usage))
	if err != nil {
		return err
	}
	defer s.release(name)
	next := k.merged(c.command(), cmd)
	if err := k.checkStart(verb, next); err != nil {
		return err
	}
	r.begin(cmd.String())
	was := c.haltUp()
	return c.launch(ctx, r, next, fmt.Sprintf("was %s; %s", was, how))
}

// stopClient ends the client a stop names for good.
func stopClient[C startable[Cmd], Cmd fmt.Stringer](r *run, k clientKind[C, Cmd], name string, cmd Cmd) error {
	s := k.set()
	verb := s.kind + " stop " + name
	c, err := s.claimNamed(verb, name, "")
	if err != nil {
		return err
	}
	defer s.release(name)
	was := c.stateNow()
	if was == ClientStopped {
		return fmt.Errorf("%s: %s is stopped already", verb, name)
	}
	r.begin(cmd.String())
	err = c.halt(true)
	k.stopped(r, c, was)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return nil
}

// close stops every client without a word: the world is going away.
func (s *clientSet[C]) close() {
	s.mu.Lock()
	s.closed = true
	all := make([]C, 0, len(s.byName))
	for _, c := range s.byName {
		all = append(all, c)
	}
	s.mu.Unlock()
	for _, c := range all {
		c.kill()
	}
}

// begin makes a new run the client's current one, unless the set has
// closed. set, called with c.mu held, records the run and its command.
func (s *clientSet[C]) begin(c *clientCore, crash string, set func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c.mu.Lock()
	set()
	c.state, c.crash, c.waiting, c.lastErr = ClientUp, crash, "", ""
	c.clock = s.l.clock
	c.since = c.clock.Now()
	c.mu.Unlock()
	return true
}

// processedBy records that c finished the work for a message of a group
// or queue, read from topic ("" for a queue), with its key ("" for none).
func (s *clientSet[C]) processedBy(c *clientCore, of, msgID, topic, key string) {
	if key == "" {
		// No key, no promise of order: each unkeyed message is its own
		// key, so order_violations never compares two of them.
		key = "\x00" + msgID
	}
	s.mu.Lock()
	set := s.processed[of]
	if set == nil {
		set = map[string]bool{}
		s.processed[of] = set
	}
	set[msgID] = true
	s.done.Add(of, s.l.clock.Now())
	if s.workers[of] == nil {
		s.workers[of] = map[string]bool{}
	}
	s.workers[of][c.name] = true
	s.doneWork = append(s.doneWork, checker.Done{MsgID: msgID, Client: c.name, Group: of, Topic: topic, Key: key})
	s.mu.Unlock()
	c.mu.Lock()
	c.processedN++
	c.mu.Unlock()
}

// counts reads a group's or queue's deliveries, distinct messages processed
// and clients that finished some work; known says whether anything was
// ever delivered to it.
func (s *clientSet[C]) counts(of string) (delivered, processed, workers int, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delivered, known = s.delivered[of]
	return delivered, len(s.processed[of]), len(s.workers[of]), known
}

// doneCopy is the finished work so far, in the order it finished.
func (s *clientSet[C]) doneCopy() []checker.Done {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.doneWork)
}

// event puts a client's event in the timeline, unless its world has been
// retired.
func (s *clientSet[C]) event(detail bool, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if !detail {
		s.l.syncBroker(s.w) // what the broker did first comes first
	}
	s.l.addFor(s.w, Event{Time: s.l.clock.Now(), Kind: EventClient, Text: text, Detail: detail})
}

// checkClientName checks a consumer's or worker's name.
func checkClientName(verb, name string) error {
	if strings.HasPrefix(name, "_") {
		return fmt.Errorf("%s: client names cannot start with '_'", verb)
	}
	return nil
}

// checkClientOptions checks a consumer's or worker's options.
func (w *world) checkClientOptions(verb string, o command.ClientOptions) error {
	if o.Retry == "none" && o.MaxAttempts > 1 {
		return fmt.Errorf("%s: max-attempts=%d with retry=none: without retries there is one attempt; use retry=immediate or retry=backoff", verb, o.MaxAttempts)
	}
	if o.Service != "" {
		if _, ok := w.handler(o.Service); !ok {
			return fmt.Errorf("%s: service=%s: %s", verb, o.Service, w.svc.NotRunning(o.Service))
		}
	}
	return nil
}
