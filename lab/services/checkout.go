package services

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// CheckoutMode is the request path's shape.
type CheckoutMode string

// The checkout's modes.
const (
	// Sync calls stock, payment, receipt and warehouse in turn while the
	// buyer waits, on one of N request threads.
	Sync CheckoutMode = "sync"
	// Queued does the fast part (stock, payment), publishes a message for
	// the rest, and answers.
	Queued CheckoutMode = "queued"
)

// CheckoutModes lists the modes, for help and suggestions.
var CheckoutModes = []CheckoutMode{Sync, Queued}

// Charger is what checkout needs from the payment provider; *Payments is one.
type Charger interface {
	Charge(ctx context.Context, r ChargeRequest) (ChargeResult, error)
}

// CheckoutConfig configures NewCheckout. Zero fields take the defaults shown.
// Durations are lab time.
type CheckoutConfig struct {
	Name    string       // "checkout"
	Mode    CheckoutMode // Sync
	Threads int          // request threads; 8
	// Timeout is the buyer's deadline from arrival, the wait for a thread
	// included: past it the buyer sees an error page; 5s.
	Timeout time.Duration
	// How long each downstream call takes: 20ms, 50ms, 100ms, 30ms. The
	// reference's slow receipt service is Receipt = 3s.
	Stock, Payment, Receipt, Warehouse time.Duration
	Queue                              string  // where queued mode sends the rest of the work; "receipts"
	Item                               string  // the item on sale; "phone"
	InitialStock                       int64   // units of Item in stock; 1,000,000
	Writes                             float64 // write ceiling, transactions per second of lab time; 0 = none
}

// Purchase is one buyer's checkout. Zero fields: user 42, ₹450.
type Purchase struct {
	OrderID int64
	UserID  int64
	Amount  int64
}

// CheckoutResult is what the buyer saw.
type CheckoutResult struct {
	OrderID int64
	OK      bool
	Charged bool          // the payment went through (also when the buyer then saw an error)
	Latency time.Duration // arrival to answer, lab time
	Stage   string        // where it failed: "thread", "stock", "payment", "receipt", "warehouse", "publish"
}

// LatencySummary summarises answered checkouts' latencies (lab time).
type LatencySummary struct {
	Count                    int
	Mean, P50, P95, P99, Max time.Duration
	min                      time.Duration
}

// Min is the fastest answer.
func (l LatencySummary) Min() time.Duration { return l.min }

// CheckoutStats is the checkout's measurements so far.
type CheckoutStats struct {
	Mode             CheckoutMode
	Threads          int
	Busy             int   // threads working now
	Waiting          int   // buyers waiting for a thread now
	Requests         int64 // buyers arrived
	OK               int64 // answered with success
	Errors           int64 // answered with an error page
	NoThread         int64 // errors: never got a request thread before the deadline
	TimedOut         int64 // errors: passed the deadline inside a downstream call
	ChargedButFailed int64 // errors after the payment went through
	Latency          LatencySummary
	OKLatency        LatencySummary
}

// Checkout is the order service's request path: stock and checkouts tables,
// the payment provider through a Charger, the receipt and warehouse calls
// simulated as waits on the lab clock.
type Checkout struct {
	*base
	cfg     CheckoutConfig
	db      *database
	charger Charger

	mu      sync.Mutex
	stats   CheckoutStats // Busy is the request threads taken
	waiters []*request    // buyers waiting for a thread, oldest first
	all     []time.Duration
	ok      []time.Duration
}

// NewCheckout starts a checkout with its own fresh database. Queued mode
// needs env.Publisher.
func NewCheckout(ctx context.Context, cfg CheckoutConfig, env Env, charger Charger) (*Checkout, error) {
	if cfg.Name == "" {
		cfg.Name = "checkout"
	}
	if cfg.Mode == "" {
		cfg.Mode = Sync
	}
	if !slices.Contains(CheckoutModes, cfg.Mode) {
		return nil, fmt.Errorf("%s: unknown mode %q (want sync or queued)", cfg.Name, cfg.Mode)
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 8
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Stock, 20*time.Millisecond)
	def(&cfg.Payment, 50*time.Millisecond)
	def(&cfg.Receipt, 100*time.Millisecond)
	def(&cfg.Warehouse, 30*time.Millisecond)
	if cfg.Queue == "" {
		cfg.Queue = "receipts"
	}
	if cfg.Item == "" {
		cfg.Item = "phone"
	}
	if cfg.InitialStock <= 0 {
		cfg.InitialStock = 1_000_000
	}
	if charger == nil {
		return nil, fmt.Errorf("%s: no payment provider", cfg.Name)
	}
	if cfg.Mode == Queued && env.Publisher == nil {
		return nil, fmt.Errorf("%s: queued mode needs a publisher", cfg.Name)
	}
	s := &Checkout{base: newBase(cfg.Name, env, nil), cfg: cfg, charger: charger}
	s.stats.Mode, s.stats.Threads = cfg.Mode, cfg.Threads
	db, err := s.addDB(ctx, cfg.Name, cfg.Writes, []string{"checkouts", "stock"}, []string{
		`CREATE TABLE stock (item TEXT PRIMARY KEY, quantity INTEGER NOT NULL CHECK (quantity >= 0))`,
		`CREATE TABLE checkouts (
  order_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL,
  mode TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
  charged INTEGER NOT NULL,
  stage TEXT,
  error TEXT,
  latency_ms INTEGER NOT NULL,
  arrived_at TEXT NOT NULL,
  answered_at TEXT NOT NULL
)`,
		fmt.Sprintf(`INSERT INTO stock (item, quantity) VALUES ('%s', %d)`, cfg.Item, cfg.InitialStock),
	})
	if err != nil {
		return nil, err
	}
	s.db = db
	return s, nil
}

// Mode returns the checkout's mode.
func (s *Checkout) Mode() CheckoutMode { return s.cfg.Mode }

// Config returns the checkout's configuration, defaults filled in.
func (s *Checkout) Config() CheckoutConfig { return s.cfg }

// request is one buyer's checkout in flight. The buyer is answered once:
// by the thread when it finishes in time, or by the deadline when it does
// not, whichever comes first.
type request struct {
	s       *Checkout
	ctx     context.Context // the lab's, with hold: a deadline does not cancel work in progress
	hold    Hold            // on while the checkout works for the buyer, not while it waits
	p       Purchase
	arrived time.Time
	thread  chan struct{} // closed when a freed thread is handed over

	mu       sync.Mutex
	stage    string
	charged  bool
	answered bool
	res      CheckoutResult
	err      error

	// row serialises the buyer's checkouts row: its insert, and the
	// correction when the charge lands after the error page.
	row sync.Mutex
}

func (r *request) setStage(stage string) (buyerGone bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stage = stage
	return r.answered
}

func (r *request) markCharged() {
	r.mu.Lock()
	r.charged = true
	late := r.answered && !r.res.OK
	r.mu.Unlock()
	if late {
		// The deadline answered while the charge was running: count it now.
		r.s.mu.Lock()
		r.s.stats.ChargedButFailed++
		r.s.mu.Unlock()
		r.s.emit(Event{Kind: EventCheckout, Key: fmt.Sprint(r.p.OrderID),
			Detail: fmt.Sprintf("order %d: charged ₹%d after its buyer saw an error page", r.p.OrderID, r.p.Amount)})
		// The row says not charged if answer wrote it first; if not, answer
		// reads charged when it writes.
		r.row.Lock()
		defer r.row.Unlock()
		_, _ = r.s.db.writeOne(context.WithoutCancel(r.ctx),
			`UPDATE checkouts SET charged = 1 WHERE order_id = ? AND status = 'error' AND charged = 0`, r.p.OrderID)
	}
}

// timeout answers the buyer with an error page at the deadline.
func (r *request) timeout() {
	r.mu.Lock()
	stage := r.stage
	r.mu.Unlock()
	err := fmt.Errorf("%w after %s, in %s", ErrTimeout, r.s.cfg.Timeout, stage)
	if stage == "thread" {
		err = fmt.Errorf("%w within %s", ErrNoThread, r.s.cfg.Timeout)
	}
	r.answer(err)
}

// answer gives the buyer their answer, once, and records it: stats, an
// event, a checkouts row.
func (r *request) answer(err error) {
	s := r.s
	r.mu.Lock()
	if r.answered {
		r.mu.Unlock()
		return
	}
	r.answered = true
	now := s.env.Clock()
	res := CheckoutResult{OrderID: r.p.OrderID, OK: err == nil, Charged: r.charged, Latency: now.Sub(r.arrived)}
	if err != nil {
		res.Stage = r.stage
		err = fmt.Errorf("%s: order %d: %w", s.name, r.p.OrderID, err)
	}
	r.res, r.err = res, err
	r.mu.Unlock()

	s.mu.Lock()
	s.all = append(s.all, res.Latency)
	if res.OK {
		s.stats.OK++
		s.ok = append(s.ok, res.Latency)
	} else {
		s.stats.Errors++
		switch {
		case errors.Is(err, ErrNoThread):
			s.stats.NoThread++
		case errors.Is(err, ErrTimeout):
			s.stats.TimedOut++
		}
		if res.Charged {
			s.stats.ChargedButFailed++
		}
	}
	s.mu.Unlock()

	detail := fmt.Sprintf("order %d answered OK in %s", r.p.OrderID, res.Latency)
	status, stage, errCol := "ok", sql.NullString{}, sql.NullString{}
	if !res.OK {
		detail = fmt.Sprintf("order %d: error page after %s (%v)", r.p.OrderID, res.Latency, errors.Unwrap(err))
		if res.Charged {
			detail += fmt.Sprintf(": charged ₹%d and told it failed", r.p.Amount)
		} else {
			detail += ": not charged"
		}
		status = "error"
		stage = sql.NullString{String: res.Stage, Valid: true}
		errCol = sql.NullString{String: errors.Unwrap(err).Error(), Valid: true}
	}
	s.emit(Event{Kind: EventCheckout, Key: fmt.Sprint(r.p.OrderID), Detail: detail, Err: errText(err)})
	r.row.Lock()
	defer r.row.Unlock()
	charged := 0
	r.mu.Lock()
	if r.charged {
		charged = 1
	}
	r.mu.Unlock()
	// A failure here is in the SQL event; the buyer's answer stands.
	_, _ = s.db.writeOne(context.WithoutCancel(r.ctx),
		`INSERT INTO checkouts (order_id, user_id, mode, status, charged, stage, error, latency_ms, arrived_at, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.p.OrderID, r.p.UserID, string(s.cfg.Mode), status, charged, stage, errCol, res.Latency.Milliseconds(), labTime(r.arrived), labTime(now))
}

// result is the buyer's answer; Charged is read now, so a charge that
// landed after the error page counts.
func (r *request) result() (CheckoutResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	res.Charged = r.charged
	return res, r.err
}

// Buy runs one buyer's checkout; run it on its own goroutine per buyer, as
// requests arrive. The buyer waits for a request thread, then the thread
// makes the calls in turn. At the deadline (Timeout after arrival) a buyer
// still waiting sees an error page — but a thread inside a downstream call
// stays in it until the call returns, as a blocking client does: that is
// how a slow receipt service eats the pool. Between calls the thread gives
// up on a buyer who is gone.
//
// Buy returns the buyer's answer (an error is the error page; Charged says
// whether they paid all the same) once its thread, if it got one, is free.
func (s *Checkout) Buy(ctx context.Context, p Purchase) (CheckoutResult, error) {
	return s.Arrive(ctx, p)()
}

// Arrive is Buy in two halves: the buyer arrives now — counted, and its
// deadline running from this moment of lab time — and the returned
// function, run on the buyer's own goroutine, does the rest and answers.
// A caller that starts buyers on goroutines arrives them first, so an
// arrival counts when it happens, not when the machine gets round to
// running its goroutine.
func (s *Checkout) Arrive(ctx context.Context, p Purchase) func() (CheckoutResult, error) {
	if p.UserID == 0 {
		p.UserID = 42
	}
	if p.Amount == 0 {
		p.Amount = 450
	}
	if err := s.up(); err != nil {
		return func() (CheckoutResult, error) { return CheckoutResult{OrderID: p.OrderID}, err }
	}
	r := &request{s: s, ctx: ctx, p: p, arrived: s.env.Clock(), stage: "thread"}
	// What the checkout does between its modelled calls takes no lab time:
	// a hold keeps the lab's clock for it from the arrival, which the
	// goroutine that serves the buyer may be slow to reach on a busy
	// machine. The deadline's timer keeps ctx, without the hold.
	r.ctx, r.hold = s.env.Hold(ctx)
	r.hold.On(r.arrived)
	s.mu.Lock()
	s.stats.Requests++
	s.stats.Waiting++
	s.mu.Unlock()
	return func() (CheckoutResult, error) {
		defer r.hold.Close()
		return s.serve(ctx, r)
	}
}

// serve is the part of a buyer's visit after it arrived.
func (s *Checkout) serve(ctx context.Context, r *request) (CheckoutResult, error) {
	// The deadline runs on the lab clock, on its own goroutine, which Buy
	// waits for before it returns.
	deadline, stop := context.WithCancel(ctx)
	timer := make(chan struct{})
	go func() {
		defer close(timer)
		if s.env.Sleeper.Sleep(deadline, s.cfg.Timeout-s.env.Clock().Sub(r.arrived)) == nil {
			r.timeout()
			stop()
		}
	}()
	defer func() { stop(); <-timer }()

	if !s.takeThread(r, deadline) {
		if ctx.Err() != nil {
			r.answer(ctx.Err())
		}
		return r.result()
	}
	err := s.work(r)
	s.freeThread()
	if err != errBuyerGone {
		r.answer(err)
	}
	return r.result()
}

var errBuyerGone = errors.New("buyer gone")

// takeThread gives r a request thread, at once if one is free, else when a
// busy one is handed over, and says false if r's deadline came first.
// Waiting and Busy change together, so no moment shows a thread free
// while a buyer waits for one.
func (s *Checkout) takeThread(r *request, deadline context.Context) bool {
	s.mu.Lock()
	if s.stats.Busy < s.cfg.Threads {
		s.stats.Waiting--
		s.stats.Busy++
		s.mu.Unlock()
		return true
	}
	r.thread = make(chan struct{})
	s.waiters = append(s.waiters, r)
	s.mu.Unlock()
	// Every thread is busy: waiting for one is waiting on the other
	// buyers' calls, which take lab time.
	r.hold.Off()
	select {
	case <-r.thread:
		return true
	case <-deadline.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.waiters, r)
	if i < 0 {
		return true // handed a thread as the deadline came: it finds the buyer gone
	}
	s.waiters = slices.Delete(s.waiters, i, i+1)
	s.stats.Waiting--
	return false
}

// freeThread hands a finished thread to the buyer who has waited longest,
// holding the lab's clock for that buyer from this moment, or frees it.
func (s *Checkout) freeThread() {
	s.mu.Lock()
	if len(s.waiters) == 0 {
		s.stats.Busy--
		s.mu.Unlock()
		return
	}
	w := s.waiters[0]
	s.waiters = s.waiters[1:]
	s.stats.Waiting--
	s.mu.Unlock()
	w.hold.On(s.env.Clock())
	close(w.thread)
}

// call is one downstream call taking d of lab time; only the lab's context
// interrupts it.
func (s *Checkout) call(r *request, stage string, d time.Duration) error {
	if r.setStage(stage) {
		return errBuyerGone
	}
	return s.env.Sleeper.Sleep(r.ctx, d)
}

func (s *Checkout) work(r *request) error {
	if r.setStage("stock") {
		return errBuyerGone
	}
	n, err := s.db.writeOne(r.ctx, `UPDATE stock SET quantity = quantity - 1 WHERE item = ? AND quantity > 0`, s.cfg.Item)
	if err != nil {
		return fmt.Errorf("stock: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("stock: %s sold out", s.cfg.Item)
	}
	if err := s.env.Sleeper.Sleep(r.ctx, s.cfg.Stock); err != nil {
		return err
	}

	if r.setStage("payment") {
		return errBuyerGone
	}
	if _, err := s.charger.Charge(r.ctx, ChargeRequest{
		Key: fmt.Sprint(r.p.OrderID), OrderID: r.p.OrderID, UserID: r.p.UserID, Amount: r.p.Amount,
	}); err != nil {
		return fmt.Errorf("payment: %w", err)
	}
	r.markCharged()
	if err := s.env.Sleeper.Sleep(r.ctx, s.cfg.Payment); err != nil {
		return err
	}

	if s.cfg.Mode == Queued {
		if r.setStage("publish") {
			return errBuyerGone
		}
		body, _ := json.Marshal(struct {
			Event  string `json:"event"`
			Order  int64  `json:"order_id"`
			User   int64  `json:"user_id"`
			Amount int64  `json:"amount"`
		}{"order_paid", r.p.OrderID, r.p.UserID, r.p.Amount})
		m := Message{ID: fmt.Sprintf("%s-%d", s.name, r.p.OrderID), Key: fmt.Sprint(r.p.OrderID), Value: string(body)}
		out, err := s.env.Publisher.Publish(r.ctx, s.cfg.Queue, m)
		if out != Acknowledged {
			if err == nil {
				err = fmt.Errorf("%s", out)
			}
			return fmt.Errorf("publish %s: %w: %w", m.ID, ErrNotPublished, err)
		}
		return nil
	}
	if err := s.call(r, "receipt", s.cfg.Receipt); err != nil {
		return err
	}
	return s.call(r, "warehouse", s.cfg.Warehouse)
}

// Stats returns the measurements so far.
func (s *Checkout) Stats() CheckoutStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Latency = summarize(s.all)
	st.OKLatency = summarize(s.ok)
	return st
}

func summarize(ds []time.Duration) LatencySummary {
	if len(ds) == 0 {
		return LatencySummary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	q := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.5) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return LatencySummary{Count: len(s), Mean: sum / time.Duration(len(s)), P50: q(0.50), P95: q(0.95), P99: q(0.99), Max: s[len(s)-1], min: s[0]}
}
