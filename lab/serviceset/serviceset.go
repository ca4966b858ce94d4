// Package serviceset is the lab's family of service commands: the SQLite
// services of lab/services (orders, payments, wallet, checkout) running in
// one world, wired to the broker, the clock, the timeline and the
// checker, and driven by `service start|restart|stop`, `order`, `sql`,
// rows(SERVICE.TABLE[, WHERE]) and state(SERVICE).
//
// For the consumers and workers: Set.Handler(name) returns the
// running service of that name that takes deliveries (wallet, payments) as
// a services.Handler. Call Handle as the client's work for one message,
// passing the message's id, key and value, and read its error as
// services.Handler documents (nil: ack; ErrCrashed: the client crashes
// with it; ErrNotRunning: no ack, retry later; ErrBadMessage: permanent).
// The handler stays valid after a restart; after a stop, Handle says
// ErrNotRunning. The services report their side effects themselves (an
// effect event with the message id, which observe hands the checker), so
// a consumer records only its deliveries.
//
// Services publish through a lab producer client named after the service
// (acks=all), keeping the message id and key the service chose; the
// produce goes into the history like any other, so the checker counts it.
// A publish to a queue is a send, recorded like any other. The lab creates
// no topic or queue for them: a publish to a missing one fails and says what
// to create. Checkout's queued mode sends to the queue receipts (or
// publishes to a topic of that name, if that is what exists).
//
// This file holds the set and the service commands; env.go what a
// service is given (publisher, sink, the outbox relay), and values.go the
// order and sql commands, the values and the snapshot's tables.
package serviceset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
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

// Set is one world's services. ops serialises the commands that
// start, restart and stop them; mu guards the maps.
type Set struct {
	w   family.World
	lab Lab

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
	// started says where a service came from that no command started:
	// a program's own database, attached.
	started string
}

// Lab is what the services get from the lab beyond their world.
type Lab interface {
	// Publisher publishes a service's messages as a client of its name:
	// to a queue, or produced to a topic, each into the lab's history.
	Publisher(service string) services.Publisher
	// Names says whether a queue and whether a topic has that name now.
	Names(name string) (queue, topic bool)
	// Published finds where a client's last publish of a message went,
	// when a partition acknowledged it.
	Published(client, msgID string) (topic string, partition int, offset int64, ok bool)
	// Detail says whether a service's event is one of many small ones
	// that a screen may hide.
	Detail(e services.Event) bool
	// HasClient says whether a client of that name exists.
	HasClient(name string) bool
}

var _ family.Family = (*Set)(nil)

// New returns a world's services, none running.
func New(w family.World, lab Lab) *Set {
	return &Set{w: w, lab: lab, running: map[string]*runningService{}, stopped: map[string]bool{}}
}

// get returns the named service if it is up or crashed.
func (s *Set) get(name string) *runningService {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[name]
}

// NotRunning explains why a service cannot be used and what would help.
func (s *Set) NotRunning(name string) string {
	s.mu.Lock()
	stopped := s.stopped[name]
	s.mu.Unlock()
	if stopped {
		return fmt.Sprintf("%s was stopped and its database went with it; service start %s starts it again, empty", name, name)
	}
	return fmt.Sprintf("no %s service is running; start it with service start %s", name, name)
}

// Attach shows the SQLite file at path, which a program outside the lab
// writes, as the service name, with from saying whose it is: the screens
// show its tables as they change. The lab never writes it.
func (s *Set) Attach(name, path, from string) error {
	ctx, cancel := family.Bind(context.Background(), s.w)
	defer cancel()
	ext, err := services.OpenExternal(ctx, name, path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.running[name] != nil {
		ext.Close()
		return fmt.Errorf("attach %s: a service of that name is already running", name)
	}
	s.running[name] = &runningService{svc: ext, started: from}
	return nil
}

// Handler returns the running service called name that takes deliveries
// (wallet, payments), for consumers and workers. See the package comment.
func (s *Set) Handler(name string) (services.Handler, bool) {
	rs := s.get(name)
	if rs == nil {
		return nil, false
	}
	h, ok := rs.svc.(services.Handler)
	return h, ok
}

// Close stops every relay and service and waits for the relays.
func (s *Set) Close() {
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

// --- commands

// Exec runs service, order and sql.
func (s *Set) Exec(ctx context.Context, r family.Run, cmd command.Command) error {
	switch c := cmd.(type) {
	case command.Service:
		switch c.Action {
		case command.ActionStart:
			return s.start(ctx, r, c)
		case command.ActionRestart:
			return s.restart(ctx, r, c)
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
	return fmt.Errorf("%s: crash=%s: %s has the crash points %s%s", verb, point, in, strings.Join(points, ", "), command.DidYouMean(point, points))
}

func (s *Set) start(ctx context.Context, r family.Run, c command.Service) error {
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
	r.Begin(c.String())
	ctx, cancel := family.Bind(ctx, s.w)
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
		return fmt.Errorf("%s: %w", verb, family.ErrClosed)
	}
	if o, ok := svc.(*services.Orders); ok && o.Mode() == services.Outbox {
		rs.relay = s.startRelay(o)
	}
	s.running[c.Service] = rs
	delete(s.stopped, c.Service)
	s.mu.Unlock()
	r.Say(timeline.Outcome, "%s", s.describeStart(rs))
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

func (s *Set) describeStart(rs *runningService) string {
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
		text += fmt.Sprintf("; at most %s writes/s", timeline.Number(rs.cmd.Writes))
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
		text += s.checkoutText(rs)
	}
	if dest != "" {
		if _, topic := s.lab.Names(dest); !topic {
			text += fmt.Sprintf("; there is no topic %s yet, so its publishes fail until topic create %s partitions=1", dest, dest)
		}
	}
	return text
}

func (s *Set) restart(ctx context.Context, r family.Run, c command.Service) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	verb := "service restart " + c.Service
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("%s: %s", verb, s.NotRunning(c.Service))
	}
	if err := checkCrash(verb, c.Service, rs.mode, c.Crash, rs.svc.CrashPoints()); err != nil {
		return err
	}
	r.Begin(c.String())
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
		ctx, cancel := context.WithTimeout(ctx, snapshotQueryTimeout)
		n, err := rs.svc.Count(ctx, "outbox", "status = 'pending'")
		cancel()
		if err == nil {
			text += fmt.Sprintf("; %d outbox row(s) pending, which its relay publishes now", n)
		}
	}
	if c.Crash != "" {
		text += "; it crashes once at " + c.Crash
	}
	r.Say(timeline.Outcome, "%s", text)
	return nil
}

func (s *Set) stop(r family.Run, c command.Service) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("service stop %s: %s", c.Service, s.NotRunning(c.Service))
	}
	r.Begin(c.String())
	if rs.relay != nil {
		rs.relay.stop()
	}
	s.mu.Lock()
	delete(s.running, c.Service)
	s.stopped[c.Service] = true
	s.mu.Unlock()
	err := rs.svc.Close()
	r.Say(timeline.Outcome, "%s stopped; its database went with it (service start %s begins empty)", c.Service, c.Service)
	if c.Service == "payments" && s.get("checkout") != nil {
		r.Say(timeline.Outcome, "checkout's charges fail until payments runs again")
	}
	if err != nil {
		return fmt.Errorf("service stop %s: %w", c.Service, err)
	}
	return nil
}

// Checkout returns the running checkout service.
func (s *Set) Checkout() (*services.Checkout, error) {
	rs := s.get("checkout")
	if rs == nil {
		return nil, fmt.Errorf("%s", s.NotRunning("checkout"))
	}
	co, _ := rs.svc.(*services.Checkout)
	return co, nil
}

// checkoutText says, for service start, how the checkout works and where
// queued mode sends the rest of the work.
func (s *Set) checkoutText(rs *runningService) string {
	co, _ := rs.svc.(*services.Checkout)
	text := "; it charges through payments"
	if co != nil {
		cfg := co.Config()
		text = fmt.Sprintf("; %d request threads, buyers give up after %v; it charges through payments", cfg.Threads, cfg.Timeout)
		if rs.mode == string(services.Sync) {
			return text + fmt.Sprintf(", then calls receipt (%v a call) and warehouse while the buyer waits", cfg.Receipt)
		}
	}
	const dest = "receipts"
	queue, topic := s.lab.Names(dest)
	switch {
	case queue:
		return text + fmt.Sprintf(" and sends the rest of the work (receipt, warehouse) to queue %s as client checkout", dest)
	case topic:
		return text + fmt.Sprintf(" and publishes the rest of the work (receipt, warehouse) to topic %s as client checkout", dest)
	}
	return text + fmt.Sprintf(" and sends the rest of the work to queue %s, which does not exist yet: its sends fail until queue create %s", dest, dest)
}
