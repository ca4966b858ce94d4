package lab

// The services feature: the SQLite services of lab/services (orders,
// payments, wallet, checkout) wired to the broker, the clock, the timeline
// and the checker, and driven by `service start|restart|stop`, `order`,
// `sql`, rows(SERVICE.TABLE[, WHERE]) and state(SERVICE).
//
// For the consumer and worker features: w.handler(name) returns the
// running service of that name that takes deliveries (wallet, payments) as
// a services.Handler. Call Handle as the client's work for one message,
// passing the message's id, key and value, and read its error as
// services.Handler documents (nil: ack; ErrCrashed: the client crashes
// with it; ErrNotRunning: no ack, retry later; ErrBadMessage: permanent).
// The handler stays valid after a restart; after a stop, Handle says
// ErrNotRunning. The services report their side effects themselves (an
// effect event with the message id, which this file hands the checker), so
// a consumer records only its deliveries.
//
// Services publish through a lab producer client named after the service
// (acks=all), keeping the message id and key the service chose; the
// produce goes into the history like any other, so the checker counts it.
// A publish to a queue is a send, recorded like any other. The lab creates
// no topic or queue for them: a publish to a missing one fails and says what
// to create. Checkout's queued mode sends to the queue receipts (or
// publishes to a topic of that name, if that is what exists).

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
)

// SnapshotRows is how many of a table's newest rows a snapshot carries.
const SnapshotRows = 20

// snapshotQueryTimeout bounds a snapshot's read of one table, in wall time.
const snapshotQueryTimeout = 2 * time.Second

// The outbox relay: it runs when an order is placed or the service
// restarts, and after a failed pass retries with a backoff in lab time.
const (
	relayBatch    = 100
	relayRetryMin = 100 * time.Millisecond
	relayRetryMax = 5 * time.Second
)

// ServiceState is one service as the screens show it.
type ServiceState struct {
	Name    string `json:"name"`
	State   string `json:"state"`   // up, crashed or stopped
	Started string `json:"started"` // the command that started it
	// Mode is the orders' or checkout's mode, or the wallet's strategy.
	Mode     string                  `json:"mode,omitempty"`
	Tables   []TableState            `json:"tables,omitempty"`
	Writes   []services.WriteStats   `json:"writes,omitempty"`
	Checkout *services.CheckoutStats `json:"checkout,omitempty"`
}

// TableState is a window on one of a service's tables: its newest rows.
type TableState struct {
	Name    string     `json:"name"` // "orders.outbox", as rows(…) names it
	DB      string     `json:"db"`   // the database that holds it ("wallet-dedupe")
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"` // up to SnapshotRows of the newest, oldest first; NULL as "NULL"
	Total   int64      `json:"total"`
	Error   string     `json:"error,omitempty"` // why the table could not be read
}

// ServiceEvent is what a service reported: one SQL statement it ran, with
// its arguments, or a step of its work.
type ServiceEvent struct {
	Service      string `json:"service"`
	DB           string `json:"db,omitempty"`
	Kind         string `json:"kind"` // sql, order-placed, published, effect, crashed, …
	SQL          string `json:"sql,omitempty"`
	Args         []any  `json:"args,omitempty"`
	RowsAffected int64  `json:"rows_affected,omitempty"` // writes; -1 when not known
	Rows         int    `json:"rows,omitempty"`          // reads: rows returned
	MsgID        string `json:"msg_id,omitempty"`
	Key          string `json:"key,omitempty"`
	Detail       string `json:"detail,omitempty"`
	Err          string `json:"error,omitempty"`
}

// servicesFeature is the services' family of commands and values.
type servicesFeature struct{}

// serviceSet is one world's services. ops serialises the commands that
// start, restart and stop them; mu guards the maps.
type serviceSet struct {
	l *Lab
	w *world

	ops sync.Mutex

	mu      sync.Mutex
	running map[string]*runningService // up or crashed
	stopped map[string]bool            // stopped since (a stopped service's database is gone)
	effects []checker.Effect
	closed  bool
}

// runningService is a started service and what the lab runs for it.
type runningService struct {
	svc   services.Service
	cmd   command.Service
	mode  string
	relay *relay // the outbox relay of an orders service in outbox mode
}

func newServiceSet(l *Lab, w *world) *serviceSet {
	return &serviceSet{l: l, w: w, running: map[string]*runningService{}, stopped: map[string]bool{}}
}

// get returns the named service if it is up or crashed.
func (s *serviceSet) get(name string) *runningService {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[name]
}

// notRunning explains why a service cannot be used and what would help.
func (s *serviceSet) notRunning(name string) string {
	s.mu.Lock()
	stopped := s.stopped[name]
	s.mu.Unlock()
	if stopped {
		return fmt.Sprintf("%s was stopped and its database went with it; service start %s starts it again, empty", name, name)
	}
	return fmt.Sprintf("no %s service is running; start it with service start %s", name, name)
}

// handler returns the running service called name that takes deliveries
// (wallet, payments), for consumers and workers. See the top of this file.
func (w *world) handler(name string) (services.Handler, bool) {
	rs := w.svc.get(name)
	if rs == nil {
		return nil, false
	}
	h, ok := rs.svc.(services.Handler)
	return h, ok
}

// close stops every relay and service and waits for the relays.
func (s *serviceSet) close() {
	s.ops.Lock()
	defer s.ops.Unlock()
	s.mu.Lock()
	all := s.running
	s.running = map[string]*runningService{}
	s.closed = true
	s.mu.Unlock()
	for _, rs := range all {
		if rs.relay != nil {
			rs.relay.stop()
		}
		rs.svc.Close()
	}
}

// env is what a service gets from the lab: a publisher that produces as a
// client of its name, the lab's clock and sleeper, and a sink into the
// timeline and the checker's effects.
func (s *serviceSet) env(name string) services.Env {
	return services.Env{
		Publisher: s.publisher(name),
		Clock:     s.l.clock.Now,
		Sleeper:   services.SleepFunc(s.l.clock.Sleep),
		Sink:      s.sink,
	}
}

// sink takes every event a service reports, from whatever goroutine the
// service runs on.
func (s *serviceSet) sink(e services.Event) {
	if e.Kind == services.EventEffect && e.MessageID != "" {
		s.mu.Lock()
		s.effects = append(s.effects, checker.Effect{Service: e.Service, Kind: effectKind(e.Service), MsgID: e.MessageID})
		s.mu.Unlock()
	}
	s.l.addService(s.w, e)
}

// effectKind names what a service's effect is, for the checker.
func effectKind(service string) string {
	switch service {
	case "payments":
		return "charge"
	case "wallet":
		return "credit"
	}
	return "effect"
}

var sqlLineBreaks = regexp.MustCompile(`\s*\n\s*`)

// addService puts one service event in the timeline, unless its world has
// been retired.
func (l *Lab) addService(w *world, e services.Event) {
	kind := EventService
	if e.Kind == services.EventSQL {
		kind = EventSQL
	}
	se := &ServiceEvent{Service: e.Service, DB: e.DB, Kind: string(e.Kind), SQL: e.SQL, Args: e.Args, RowsAffected: e.RowsAffected,
		Rows: e.Rows, MsgID: e.MessageID, Key: e.Key, Detail: e.Detail, Err: e.Err}
	text := sqlLineBreaks.ReplaceAllString(e.String(), " ")
	detail := w.buyers.quiet(e.Service, e.Kind)
	l.tl.mu.Lock()
	defer l.tl.mu.Unlock()
	if w.retired {
		return
	}
	l.tl.addLocked(Event{Time: e.Time, Kind: kind, Text: text, Detail: detail || w.fromLoad(e.MessageID) || w.fromLoad(e.Cause), Service: se})
}

// publisher sends a service's messages with a lab producer client named
// after the service, acks=all, keeping the service's message id and key.
// Each one goes into the history as a produce.
func (s *serviceSet) publisher(name string) services.Publisher {
	return services.PublisherFunc(func(ctx context.Context, dest string, m services.Message) (services.Outcome, error) {
		w := s.w
		if w.isQueue(dest) {
			return w.queues.publish(ctx, name, dest, m)
		}
		if _, err := w.topic(dest); err != nil {
			if name == "checkout" {
				return services.Failed, fmt.Errorf("%w %q: create it with queue create %s (the lab creates no queue for the checkout service)",
					broker.ErrUnknownQueue, dest, dest)
			}
			return services.Failed, fmt.Errorf("%w %q: create it with topic create %s partitions=1 (the lab creates no topic for the %s service)",
				broker.ErrUnknownTopic, dest, dest, name)
		}
		ctx, cancel := w.bind(ctx)
		defer cancel()
		_, p, err := w.producer(ctx, name, producerKey{acks: broker.AcksAll})
		if err != nil {
			return services.Failed, err
		}
		now := s.l.clock.Now()
		rec := &Produce{MsgID: m.ID, Client: name, Topic: dest, Key: m.Key, Keyed: m.Key != "", Value: m.Value, Acks: "all",
			Partition: -1, Offset: -1, Outcome: checker.Pending, Sent: now}
		w.mu.Lock()
		w.history = append(w.history, rec)
		rec.Seq = len(w.history)
		w.mu.Unlock()
		msg := broker.Message{Topic: dest, Value: []byte(m.Value), MsgID: m.ID}
		if m.Key != "" {
			msg.Key = []byte(m.Key)
		}
		res := p.Produce(ctx, msg)
		w.settle([]*Produce{rec}, res, s.l.clock.Now())
		switch res[0].Outcome {
		case broker.OutcomeAcked:
			return services.Acknowledged, nil
		case broker.OutcomeUnknown:
			return services.Unknown, res[0].Err
		}
		return services.Failed, res[0].Err
	})
}

// lastProduce finds where a service's last publish of a message went.
func (w *world) lastProduce(client, msgID string) (Produce, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.history) - 1; i >= 0; i-- {
		if p := w.history[i]; p.Client == client && p.MsgID == msgID {
			return *p, true
		}
	}
	return Produce{}, false
}

// paymentsNow charges through whichever payments service runs when the
// charge is made, so checkout survives payments being stopped and started.
type paymentsNow struct{ s *serviceSet }

func (p paymentsNow) Charge(ctx context.Context, r services.ChargeRequest) (services.ChargeResult, error) {
	rs := p.s.get("payments")
	if rs == nil {
		return services.ChargeResult{}, fmt.Errorf("payments: %w: %s", services.ErrNotRunning, p.s.notRunning("payments"))
	}
	return rs.svc.(*services.Payments).Charge(ctx, r)
}

// --- the outbox relay

// relay is the goroutine that runs an outbox's relay passes. It is owned
// by the service set: stop ends it and waits.
type relay struct {
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *serviceSet) startRelay(o *services.Orders) *relay {
	ctx, cancel := context.WithCancel(s.w.ctx)
	rl := &relay{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go s.runRelay(ctx, o, rl)
	return rl
}

// poke asks for a pass soon; pokes while a pass runs add up to one more.
func (rl *relay) poke() {
	select {
	case rl.kick <- struct{}{}:
	default:
	}
}

func (rl *relay) stop() {
	rl.cancel()
	<-rl.done
}

// runRelay runs a pass whenever it is poked. A pass that fails (the topic
// missing, the broker unreachable) is retried after a backoff in lab time;
// a crashed service waits for its restart's poke. An idle relay runs no SQL,
// so the timeline shows the passes that matter.
func (s *serviceSet) runRelay(ctx context.Context, o *services.Orders, rl *relay) {
	defer close(rl.done)
	backoff := time.Duration(0)
	for {
		if err := s.l.clock.sleepOrWake(ctx, backoff, rl.kick); err != nil {
			return
		}
		for {
			sent, err := o.RelayOnce(ctx)
			if ctx.Err() != nil || o.State() == services.StateStopped {
				return
			}
			switch {
			case err == nil && sent == relayBatch:
				continue // more may be pending
			case err == nil, errors.Is(err, services.ErrCrashed), errors.Is(err, services.ErrNotRunning):
				backoff = 0 // wait for the next order or the restart
			default:
				backoff = min(max(2*backoff, relayRetryMin), relayRetryMax)
			}
			break
		}
	}
}

// --- commands

func (servicesFeature) exec(ctx context.Context, r *run, cmd command.Command) error {
	s := r.w.svc
	switch c := cmd.(type) {
	case command.Service:
		switch c.Action {
		case command.ActionStart:
			return s.start(ctx, r, c)
		case command.ActionRestart:
			return s.restart(r, c)
		case command.ActionStop:
			return s.stop(r, c)
		}
	case command.Order:
		return s.order(ctx, r, c)
	case command.SQL:
		return s.sql(ctx, r, c)
	}
	return fmt.Errorf("%s: the services have no handler for this command", cmd.Name())
}

// modeOf is the mode or strategy a start command asks for, defaults filled in.
func modeOf(c command.Service) string {
	switch c.Service {
	case "orders":
		if c.Mode == "" {
			return string(services.Outbox)
		}
		return c.Mode
	case "checkout":
		if c.Mode == "" {
			return string(services.Sync)
		}
		return c.Mode
	case "wallet":
		if c.Strategy == "" {
			return string(services.StrategyNone)
		}
		return c.Strategy
	}
	return ""
}

// crashPoints lists the points a start command can arm.
func crashPoints(service, mode string) []string {
	switch service {
	case "orders":
		return services.OrdersMode(mode).CrashPoints()
	case "payments":
		return slices.Clone(services.PaymentsCrashPoints)
	case "wallet":
		return services.Strategy(mode).CrashPoints()
	}
	return nil
}

// checkCrash says what is wrong with crash=point for a service in a mode.
func checkCrash(verb, service, mode, point string, points []string) error {
	if point == "" || slices.Contains(points, point) {
		return nil
	}
	in := service
	if mode != "" {
		in = fmt.Sprintf("%s in mode %s", service, mode)
		if service == "wallet" {
			in = fmt.Sprintf("the wallet with strategy %s", mode)
		}
	}
	switch len(points) {
	case 0:
		return fmt.Errorf("%s: crash=%s: %s has no crash points", verb, point, in)
	case 1:
		return fmt.Errorf("%s: crash=%s: %s has one crash point, %s", verb, point, in, points[0])
	}
	return fmt.Errorf("%s: crash=%s: %s has the crash points %s%s", verb, point, in, strings.Join(points, ", "), didYouMean(point, points))
}

func (s *serviceSet) start(ctx context.Context, r *run, c command.Service) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	verb := "service start " + c.Service
	if rs := s.get(c.Service); rs != nil {
		return fmt.Errorf("%s: %s is already running (%s); service restart %s brings a crashed one back, service stop %s ends it",
			verb, c.Service, describeRunning(rs), c.Service, c.Service)
	}
	mode := modeOf(c)
	if err := checkCrash(verb, c.Service, mode, c.Crash, crashPoints(c.Service, mode)); err != nil {
		return err
	}
	var charger services.Charger
	if c.Service == "checkout" {
		if s.get("payments") == nil {
			return fmt.Errorf("%s: checkout charges its buyers through the payments service; start that first: service start payments", verb)
		}
		charger = paymentsNow{s}
	}
	var crash []string
	if c.Crash != "" {
		crash = []string{c.Crash}
	}
	r.begin(c.String())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	env := s.env(c.Service)
	var svc services.Service
	var err error
	switch c.Service {
	case "orders":
		svc, err = services.NewOrders(ctx, services.OrdersConfig{Mode: services.OrdersMode(mode), Crash: crash, Writes: c.Writes, RelayBatch: relayBatch}, env)
	case "payments":
		svc, err = services.NewPayments(ctx, services.PaymentsConfig{Crash: crash, Writes: c.Writes}, env)
	case "wallet":
		svc, err = services.NewWallet(ctx, services.WalletConfig{Strategy: services.Strategy(mode), Crash: crash, Writes: c.Writes}, env)
	case "checkout":
		svc, err = services.NewCheckout(ctx, services.CheckoutConfig{Mode: services.CheckoutMode(mode), Threads: c.Threads, Receipt: c.Receipt, Writes: c.Writes}, env, charger)
	default:
		err = fmt.Errorf("the lab has no service %q", c.Service)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	rs := &runningService{svc: svc, cmd: c, mode: mode}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		svc.Close()
		return fmt.Errorf("%s: %w", verb, ErrClosed)
	}
	if o, ok := svc.(*services.Orders); ok && o.Mode() == services.Outbox {
		rs.relay = s.startRelay(o)
	}
	s.running[c.Service] = rs
	delete(s.stopped, c.Service)
	s.mu.Unlock()
	r.say(EventOutcome, "%s", s.describeStart(rs))
	return nil
}

// describeRunning says what a running service is: "mode outbox, crashed".
func describeRunning(rs *runningService) string {
	if m := describeMode(rs); m != "" {
		return m + ", " + string(rs.svc.State())
	}
	return string(rs.svc.State())
}

// describeMode is "mode outbox", "strategy none", or "" for payments.
func describeMode(rs *runningService) string {
	switch rs.cmd.Service {
	case "orders", "checkout":
		return "mode " + rs.mode
	case "wallet":
		return "strategy " + rs.mode
	}
	return ""
}

func (s *serviceSet) describeStart(rs *runningService) string {
	name := rs.cmd.Service
	var tables []string
	for _, t := range rs.svc.Tables() {
		if t.DB != name {
			tables = append(tables, fmt.Sprintf("%s (in %s)", t.Name, t.DB))
			continue
		}
		tables = append(tables, t.Name)
	}
	text := fmt.Sprintf("%s is up; tables %s", name, strings.Join(tables, ", "))
	if m := describeMode(rs); m != "" {
		text = fmt.Sprintf("%s is up in %s; tables %s", name, m, strings.Join(tables, ", "))
	}
	if rs.cmd.Writes > 0 {
		text += fmt.Sprintf("; at most %s writes/s", trimFloat(rs.cmd.Writes))
	}
	if rs.cmd.Crash != "" {
		text += "; it crashes once at " + rs.cmd.Crash
	}
	dest := ""
	switch name {
	case "orders":
		dest = "orders"
		text += "; it publishes order events to topic orders as client orders (acks=all)"
		if rs.relay != nil {
			text += " through its outbox relay"
		}
	case "checkout":
		text += checkoutText(s.w, rs)
	}
	if dest != "" {
		if _, err := s.w.topic(dest); err != nil {
			text += fmt.Sprintf("; there is no topic %s yet, so its publishes fail until topic create %s partitions=1", dest, dest)
		}
	}
	return text
}

func (s *serviceSet) restart(r *run, c command.Service) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	verb := "service restart " + c.Service
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("%s: %s", verb, s.notRunning(c.Service))
	}
	if err := checkCrash(verb, c.Service, rs.mode, c.Crash, rs.svc.CrashPoints()); err != nil {
		return err
	}
	r.begin(c.String())
	was := rs.svc.State()
	if c.Crash != "" {
		if err := rs.svc.Arm(c.Crash); err != nil {
			return fmt.Errorf("%s: %w", verb, err)
		}
	}
	if err := rs.svc.Restart(); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if rs.relay != nil {
		rs.relay.poke()
	}
	text := fmt.Sprintf("%s is up again (it was %s)", c.Service, was)
	if rs.relay != nil {
		ctx, cancel := context.WithTimeout(context.Background(), snapshotQueryTimeout)
		n, err := rs.svc.Count(ctx, "outbox", "status = 'pending'")
		cancel()
		if err == nil {
			text += fmt.Sprintf("; %d outbox row(s) pending, which its relay publishes now", n)
		}
	}
	if c.Crash != "" {
		text += "; it crashes once at " + c.Crash
	}
	r.say(EventOutcome, "%s", text)
	return nil
}

func (s *serviceSet) stop(r *run, c command.Service) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("service stop %s: %s", c.Service, s.notRunning(c.Service))
	}
	r.begin(c.String())
	if rs.relay != nil {
		rs.relay.stop()
	}
	s.mu.Lock()
	delete(s.running, c.Service)
	s.stopped[c.Service] = true
	s.mu.Unlock()
	err := rs.svc.Close()
	r.say(EventOutcome, "%s stopped; its database went with it (service start %s begins empty)", c.Service, c.Service)
	if c.Service == "payments" && s.get("checkout") != nil {
		r.say(EventOutcome, "checkout's charges fail until payments runs again")
	}
	if err != nil {
		return fmt.Errorf("service stop %s: %w", c.Service, err)
	}
	return nil
}

// order places orders one after another through the orders service and
// says what it did with each: what a placed order ends in is a result, not
// an error.
func (s *serviceSet) order(ctx context.Context, r *run, c command.Order) error {
	rs := s.get("orders")
	if rs == nil {
		return fmt.Errorf("order: %s", s.notRunning("orders"))
	}
	o := rs.svc.(*services.Orders)
	r.begin(c.String())
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	var stored, published, failed int
	var firstErr string
	placed := 0
	for i := 0; i < c.Count && ctx.Err() == nil; i++ {
		id := c.ID + int64(i)
		res, err := o.Place(ctx, services.Order{ID: id, UserID: c.User, Amount: c.Amount, Item: c.Item})
		placed++
		if res.Stored && rs.relay != nil {
			rs.relay.poke()
		}
		if res.Stored {
			stored++
		}
		if res.Outcome == services.Acknowledged {
			published++
		}
		if err != nil {
			failed++
			if firstErr == "" {
				firstErr = err.Error()
			}
		}
		if c.Count <= listEach {
			r.say(EventOutcome, "%s", s.describeOrder(o.Mode(), id, res, err))
		}
	}
	if c.Count > listEach {
		text := fmt.Sprintf("%d orders %d–%d: %d stored, %d events published", placed, c.ID, c.ID+int64(placed)-1, stored, published)
		if o.Mode() == services.Outbox {
			text += " (the relay publishes the outbox rows)"
		}
		if failed > 0 {
			text += fmt.Sprintf(", %d failed (the first: %s)", failed, firstErr)
		}
		r.say(EventOutcome, "%s", text)
	}
	return ctx.Err()
}

// describeOrder says what placing one order did, in the words of its mode.
func (s *serviceSet) describeOrder(mode services.OrdersMode, id int64, res services.PlaceResult, err error) string {
	msg := res.MessageID
	at := ""
	if p, ok := s.w.lastProduce("orders", msg); ok && p.Outcome == checker.Acknowledged {
		at = fmt.Sprintf(" to %s/%d at offset %d", p.Topic, p.Partition, p.Offset)
	}
	switch {
	case errors.Is(err, services.ErrNotRunning):
		return fmt.Sprintf("order %d not placed: %v (service restart orders brings it back)", id, err)
	case errors.Is(err, services.ErrCrashed) && res.Stored && mode == services.CommitThenPublish:
		return fmt.Sprintf("order %d committed, then orders crashed before publishing: %s was never sent, and nothing remembers it is owed", id, msg)
	case errors.Is(err, services.ErrCrashed) && res.Stored:
		return fmt.Sprintf("order %d and its outbox row committed together, then orders crashed; the row stays pending until the relay runs again (service restart orders)", id)
	case errors.Is(err, services.ErrCrashed):
		return fmt.Sprintf("%s published%s, then orders crashed before storing order %d: the world was told of an order that does not exist", msg, at, id)
	case err != nil && res.Stored:
		why := strings.TrimPrefix(err.Error(), fmt.Sprintf("order %d stored, its event not published: ", id))
		return fmt.Sprintf("order %d committed, but its event %s was not published (%s): nobody will hear of it", id, msg, why)
	case err != nil && res.Outcome == services.Acknowledged:
		return fmt.Sprintf("%s published%s, but order %d was never stored (%v): the world was told of an order that does not exist", msg, at, id, err)
	case err != nil:
		return fmt.Sprintf("order %d not placed: %v", id, err)
	case mode == services.Outbox:
		return fmt.Sprintf("order %d committed with its outbox row (pending); the relay publishes %s", id, msg)
	case mode == services.PublishThenCommit:
		return fmt.Sprintf("%s published%s, then order %d committed", msg, at, id)
	}
	return fmt.Sprintf("order %d committed, then %s published%s", id, msg, at)
}

// sql runs a learner's read-only query on a service's database. With two
// databases (the wallet's dedupe-elsewhere), a table the first does not
// have is looked for in the second.
func (s *serviceSet) sql(ctx context.Context, r *run, c command.SQL) error {
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("sql %s: %s", c.Service, s.notRunning(c.Service))
	}
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	var res services.Result
	var err error
	db := ""
	for _, name := range rs.svc.Databases() {
		var e error
		res, e = rs.svc.QueryDB(ctx, name, c.Query)
		if e == nil {
			db, err = name, nil
			break
		}
		if err == nil {
			err = e
		}
		if !strings.Contains(e.Error(), "no such table") {
			break
		}
	}
	if db == "" {
		if strings.Contains(err.Error(), "no such table") {
			return fmt.Errorf("%w; the tables of %s are %s", err, c.Service, tableNames(rs.svc))
		}
		return err
	}
	r.begin(c.String())
	if db != c.Service {
		r.say(EventOutcome, "(from %s, the service's second database)", db)
	}
	for _, line := range strings.Split(strings.TrimRight(res.String(), "\n"), "\n") {
		r.say(EventOutcome, "%s", line)
	}
	return nil
}

func tableNames(svc services.Service) string {
	var names []string
	for _, t := range svc.Tables() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// --- values and the checker

func (servicesFeature) value(ctx context.Context, w *world, v command.Value) (any, bool, error) {
	s := w.svc
	switch v.Func {
	case "rows":
		rs := s.get(v.Service)
		if rs == nil {
			// Not yet: a learner or a lesson may be about to start it.
			return nil, true, notNow{fmt.Errorf("%s: %s", v, s.notRunning(v.Service))}
		}
		n, err := rs.svc.Count(ctx, v.Table, v.Where)
		if err != nil {
			if strings.HasPrefix(err.Error(), "rows(") {
				return nil, true, err
			}
			return nil, true, fmt.Errorf("%s: %w", v, err)
		}
		return float64(n), true, nil
	case "state":
		if rs := s.get(v.Arg); rs != nil {
			return string(rs.svc.State()), true, nil
		}
		s.mu.Lock()
		stopped := s.stopped[v.Arg]
		s.mu.Unlock()
		// A service never started is not running either; a client that
		// happens to share the name keeps its own state.
		if stopped || slices.Contains(command.Services, v.Arg) && !w.hasClient(v.Arg) {
			return string(services.StateStopped), true, nil
		}
	}
	return nil, false, nil
}

// observe hands the checker the services' side effects, each with the
// message that caused it.
func (servicesFeature) observe(_ context.Context, w *world, h *checker.History, _ *checker.Observed) error {
	w.svc.mu.Lock()
	defer w.svc.mu.Unlock()
	h.Effects = append(h.Effects, w.svc.effects...)
	return nil
}

// states copies the services for a snapshot: each table's newest rows and
// count, read on the services' read-only connections.
func (s *serviceSet) states() []ServiceState {
	s.mu.Lock()
	var names []string
	for n := range s.running {
		names = append(names, n)
	}
	for n := range s.stopped {
		names = append(names, n)
	}
	running := make(map[string]*runningService, len(s.running))
	for n, rs := range s.running {
		running[n] = rs
	}
	s.mu.Unlock()
	slices.Sort(names)
	var out []ServiceState
	for _, name := range names {
		rs := running[name]
		if rs == nil {
			out = append(out, ServiceState{Name: name, State: string(services.StateStopped)})
			continue
		}
		st := ServiceState{Name: name, State: string(rs.svc.State()), Started: rs.cmd.String(), Mode: rs.mode, Writes: rs.svc.WriteStats()}
		if co, ok := rs.svc.(*services.Checkout); ok {
			stats := co.Stats()
			st.Checkout = &stats
		}
		for _, t := range rs.svc.Tables() {
			st.Tables = append(st.Tables, tableState(rs.svc, name, t))
		}
		out = append(out, st)
	}
	return out
}

func tableState(svc services.Service, service string, t services.Table) TableState {
	ts := TableState{Name: service + "." + t.Name, DB: t.DB, Columns: []string{}, Rows: [][]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), snapshotQueryTimeout)
	defer cancel()
	n, err := svc.Count(ctx, t.Name, "")
	if err == nil {
		var res services.Result
		res, err = svc.Rows(ctx, t.Name, SnapshotRows)
		ts.Total, ts.Columns, ts.Rows = n, res.Columns, res.Strings()
	}
	if err != nil {
		ts.Error = err.Error()
	}
	return ts
}
