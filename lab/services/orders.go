package services

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// OrdersMode is how the orders service tells the world about a new order.
type OrdersMode string

// The orders service's modes.
const (
	// CommitThenPublish commits the order, then publishes its event: a crash
	// in between (crash point after-commit) loses the event.
	CommitThenPublish OrdersMode = "commit-then-publish"
	// PublishThenCommit publishes first, then stores the order: a crash
	// (after-publish) or a failed transaction leaves the world told of an
	// order that does not exist.
	PublishThenCommit OrdersMode = "publish-then-commit"
	// Outbox stores the order and an outbox row in one transaction; a relay
	// (RelayOnce, RunRelay) publishes pending rows and marks them sent. A
	// relay crash between the two (before-mark) republishes: a duplicate.
	Outbox OrdersMode = "outbox"
)

// OrdersModes lists the modes, for help and suggestions.
var OrdersModes = []OrdersMode{CommitThenPublish, PublishThenCommit, Outbox}

// CrashPoints lists the crash points the mode passes through.
// In outbox mode after-publish and before-mark name the same moment.
func (m OrdersMode) CrashPoints() []string {
	switch m {
	case CommitThenPublish:
		return []string{"after-commit"}
	case PublishThenCommit:
		return []string{"after-publish"}
	case Outbox:
		return []string{"after-commit", "before-mark", "after-publish"}
	}
	return nil
}

// OrdersConfig configures NewOrders. Zero fields take the defaults shown.
type OrdersConfig struct {
	Name  string     // "orders"
	Mode  OrdersMode // Outbox
	Topic string     // "orders": where order events go
	// IDPrefix + the order id is the event's message id: "msg-881". It is
	// stored in the outbox row, so a republish carries the same id.
	IDPrefix   string   // "msg-"
	Crash      []string // crash points to arm, each fires once
	Customers  int      // customers 1…N exist (orders.user_id must be one); 1000
	RelayBatch int      // pending rows the relay takes per pass; 100
	Writes     float64  // write ceiling, transactions per second of lab time; 0 = none
}

// Order is one order placed. Zero fields take defaults: user 42, ₹450, "phone".
type Order struct {
	ID     int64
	UserID int64
	Amount int64
	Item   string
}

// PlaceResult tells what Place did.
type PlaceResult struct {
	MessageID string
	Stored    bool    // the order row committed
	Outcome   Outcome // of the publish, when Place published (0 in outbox mode)
}

// Orders is the orders service: tables customers, orders and outbox.
type Orders struct {
	*base
	cfg   OrdersConfig
	db    *database
	relay chan struct{} // one relay pass at a time
	// refused counts, per outbox row, the relay's tries the broker
	// refused or failed: nothing of them reached the log. A try beyond
	// those is a republish (the relay's own pass holds it).
	refused map[int64]int
}

// NewOrders starts an orders service with its own fresh database.
func NewOrders(ctx context.Context, cfg OrdersConfig, env Env) (*Orders, error) {
	if cfg.Name == "" {
		cfg.Name = "orders"
	}
	if cfg.Mode == "" {
		cfg.Mode = Outbox
	}
	if !slices.Contains(OrdersModes, cfg.Mode) {
		return nil, fmt.Errorf("%s: unknown mode %q (want commit-then-publish, publish-then-commit or outbox)", cfg.Name, cfg.Mode)
	}
	if cfg.Topic == "" {
		cfg.Topic = "orders"
	}
	if cfg.IDPrefix == "" {
		cfg.IDPrefix = "msg-"
	}
	if cfg.Customers <= 0 {
		cfg.Customers = 1000
	}
	if cfg.RelayBatch <= 0 {
		cfg.RelayBatch = 100
	}
	if env.Publisher == nil {
		return nil, fmt.Errorf("%s: no publisher", cfg.Name)
	}
	s := &Orders{base: newBase(cfg.Name, env, cfg.Mode.CrashPoints()), cfg: cfg, relay: make(chan struct{}, 1), refused: map[int64]int{}}
	if err := s.armAll(cfg.Crash); err != nil {
		return nil, err
	}
	schema := []string{
		`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
		// The foreign key is checked at COMMIT (deferred): an order for an
		// unknown customer fails when the transaction commits.
		`CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES customers (id) DEFERRABLE INITIALLY DEFERRED,
  item TEXT NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0),
  status TEXT NOT NULL,
  created_at TEXT NOT NULL
)`,
		`CREATE TABLE outbox (
  id INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL UNIQUE,
  topic TEXT NOT NULL,
  msg_key TEXT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent')),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  sent_at TEXT,
  last_error TEXT
)`,
		`CREATE INDEX outbox_pending ON outbox (status, id)`,
		fmt.Sprintf(`WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < %d)
INSERT INTO customers (id, name) SELECT id, 'customer ' || id FROM n`, cfg.Customers),
	}
	db, err := s.addDB(ctx, cfg.Name, cfg.Writes, []string{"orders", "outbox", "customers"}, schema)
	if err != nil {
		return nil, err
	}
	s.db = db
	return s, nil
}

// Mode returns the service's mode.
func (s *Orders) Mode() OrdersMode { return s.cfg.Mode }

func (s *Orders) message(o Order) Message {
	payload, _ := json.Marshal(struct {
		Event  string `json:"event"`
		Order  int64  `json:"order_id"`
		User   int64  `json:"user_id"`
		Item   string `json:"item"`
		Amount int64  `json:"amount"`
	}{"order_placed", o.ID, o.UserID, o.Item, o.Amount})
	return Message{ID: fmt.Sprintf("%s%d", s.cfg.IDPrefix, o.ID), Key: fmt.Sprint(o.ID), Value: string(payload)}
}

// Place places an order the way the service's mode does it. An order that
// could not be stored or announced returns an error; a crash returns an
// error wrapping ErrCrashed and leaves the service crashed.
func (s *Orders) Place(ctx context.Context, o Order) (PlaceResult, error) {
	if o.UserID == 0 {
		o.UserID = 42
	}
	if o.Amount == 0 {
		o.Amount = 450
	}
	if o.Item == "" {
		o.Item = "phone"
	}
	msg := s.message(o)
	res := PlaceResult{MessageID: msg.ID}
	if err := s.up(); err != nil {
		return res, err
	}
	switch s.cfg.Mode {
	case CommitThenPublish:
		if err := s.store(ctx, o, msg, false); err != nil {
			return res, err
		}
		res.Stored = true
		if err := s.crashAt("after-commit", fmt.Sprintf("order %d is committed; its event was never published", o.ID), msg); err != nil {
			return res, err
		}
		out, err := s.publish(ctx, s.cfg.Topic, msg, 1, false)
		res.Outcome = out
		if out != Acknowledged {
			return res, fmt.Errorf("order %d stored, its event not published: %w", o.ID, err)
		}
	case PublishThenCommit:
		out, err := s.publish(ctx, s.cfg.Topic, msg, 1, false)
		res.Outcome = out
		if out != Acknowledged {
			return res, fmt.Errorf("order %d not stored, its event not published: %w", o.ID, err)
		}
		if err := s.crashAt("after-publish", fmt.Sprintf("order %d was announced; the transaction that would store it never ran", o.ID), msg); err != nil {
			return res, err
		}
		if err := s.store(ctx, o, msg, false); err != nil {
			s.emit(Event{Kind: EventOrderFailed, MessageID: msg.ID, Key: msg.Key,
				Detail: fmt.Sprintf("order %d was announced as %s but never stored: others were told of an order that does not exist", o.ID, msg.ID)})
			return res, err
		}
		res.Stored = true
	case Outbox:
		if err := s.store(ctx, o, msg, true); err != nil {
			return res, err
		}
		res.Stored = true
		if err := s.crashAt("after-commit", fmt.Sprintf("order %d and its outbox row are committed together; the relay will publish it", o.ID), msg); err != nil {
			return res, err
		}
	}
	return res, nil
}

// store writes the order (and, for the outbox, its event) in one transaction.
func (s *Orders) store(ctx context.Context, o Order, msg Message, outbox bool) error {
	now := labTime(s.env.Clock())
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if _, err := s.db.exec(ctx, tx,
			`INSERT INTO orders (id, user_id, item, amount, status, created_at) VALUES (?, ?, ?, ?, 'placed', ?)`,
			o.ID, o.UserID, o.Item, o.Amount, now); err != nil {
			return err
		}
		if outbox {
			if _, err := s.db.exec(ctx, tx,
				`INSERT INTO outbox (message_id, topic, msg_key, payload, status, created_at) VALUES (?, ?, ?, ?, 'pending', ?)`,
				msg.ID, s.cfg.Topic, msg.Key, msg.Value, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if s.cfg.Mode != PublishThenCommit {
			s.emit(Event{Kind: EventOrderFailed, MessageID: msg.ID, Key: msg.Key, Detail: fmt.Sprintf("order %d not stored", o.ID), Err: err.Error()})
		}
		return fmt.Errorf("order %d: %w", o.ID, err)
	}
	detail := fmt.Sprintf("order %d placed: user %d, %s, ₹%d", o.ID, o.UserID, o.Item, o.Amount)
	if outbox {
		detail += "; outbox row pending"
	}
	s.emit(Event{Kind: EventOrderPlaced, MessageID: msg.ID, Key: msg.Key, Detail: detail})
	return nil
}

// publishError is a publish the broker did not acknowledge.
type publishError struct {
	id  string
	out Outcome
	err error // the publisher's own error
}

func (e *publishError) Error() string {
	return fmt.Sprintf("publish %s: %s: %v", e.id, e.out, e.err)
}

func (e *publishError) Unwrap() []error { return []error{ErrNotPublished, e.err} }

// publish sends msg and reports the outcome.
// again says an earlier try may have reached the log: an acknowledged
// one, one with no answer, or one the relay died during.
func (s *Orders) publish(ctx context.Context, dest string, msg Message, attempt int, again bool) (Outcome, error) {
	out, err := s.env.Publisher.Publish(ctx, dest, msg)
	if out == 0 {
		out = Failed
		if err == nil {
			err = errors.New("publisher gave no outcome")
		}
	}
	if out != Acknowledged {
		if err == nil {
			err = errors.New("not acknowledged")
		}
		s.emit(Event{Kind: EventPublishFailed, MessageID: msg.ID, Key: msg.Key,
			Detail: fmt.Sprintf("%s to %s: %s", msg.ID, dest, out), Err: err.Error()})
		return out, &publishError{id: msg.ID, out: out, err: err}
	}
	if again {
		s.emit(Event{Kind: EventRepublished, MessageID: msg.ID, Key: msg.Key,
			Detail: fmt.Sprintf("%s to %s again (attempt %d): the consumer may see it twice", msg.ID, dest, attempt)})
	} else {
		s.emit(Event{Kind: EventPublished, MessageID: msg.ID, Key: msg.Key, Detail: fmt.Sprintf("%s to %s", msg.ID, dest)})
	}
	return out, nil
}

type outboxRow struct {
	id       int64
	topic    string
	attempts int
	msg      Message
}

// RelayOnce is one pass of the outbox relay: it publishes the pending rows
// in order and marks each one sent once the broker acknowledges it. It stops
// at the first row the broker does not acknowledge (that row stays pending,
// to be retried next pass, keeping order). It returns how many rows it
// marked sent. Outbox mode only.
func (s *Orders) RelayOnce(ctx context.Context) (int, error) {
	if s.cfg.Mode != Outbox {
		return 0, fmt.Errorf("%s: the relay runs only in outbox mode, not %s", s.name, s.cfg.Mode)
	}
	select {
	case s.relay <- struct{}{}:
		defer func() { <-s.relay }()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if err := s.up(); err != nil {
		return 0, err
	}
	var rows []outboxRow
	_, err := s.db.query(ctx, s.db.rw, func(r *sql.Rows) error {
		var o outboxRow
		if err := r.Scan(&o.id, &o.msg.ID, &o.topic, &o.msg.Key, &o.msg.Value, &o.attempts); err != nil {
			return err
		}
		rows = append(rows, o)
		return nil
	}, `SELECT id, message_id, topic, msg_key, payload, attempts FROM outbox WHERE status = 'pending' ORDER BY id LIMIT ?`, s.cfg.RelayBatch)
	if err != nil {
		return 0, fmt.Errorf("relay: %w", err)
	}
	sent := 0
	for _, r := range rows {
		// Count the attempt before publishing: a relay that dies after the
		// publish then knows, on restart, that this row went out before.
		if _, err := s.db.writeOne(ctx, `UPDATE outbox SET attempts = attempts + 1 WHERE id = ?`, r.id); err != nil {
			return sent, fmt.Errorf("relay: %w", err)
		}
		out, err := s.publish(ctx, r.topic, r.msg, r.attempts+1, r.attempts > s.refused[r.id])
		if out == Rejected || out == Failed {
			s.refused[r.id]++
		}
		if out != Acknowledged {
			var pe *publishError
			last := errText(err)
			if errors.As(err, &pe) {
				last = fmt.Sprintf("%s: %v", pe.out, pe.err)
			}
			if _, uerr := s.db.writeOne(ctx, `UPDATE outbox SET last_error = ? WHERE id = ?`, last, r.id); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return sent, fmt.Errorf("relay: %w", err)
		}
		detail := fmt.Sprintf("the relay published %s and died before marking it sent: the row is still pending and will be published again", r.msg.ID)
		for _, p := range []string{"before-mark", "after-publish"} {
			if err := s.crashAt(p, detail, r.msg); err != nil {
				return sent, err
			}
		}
		if _, err := s.db.writeOne(ctx, `UPDATE outbox SET status = 'sent', sent_at = ? WHERE id = ? AND status = 'pending'`,
			labTime(s.env.Clock()), r.id); err != nil {
			return sent, fmt.Errorf("relay: %w", err)
		}
		sent++
	}
	return sent, nil
}

// RunRelay runs relay passes every interval of lab time until ctx is done
// (then it returns nil) or the service is closed. While the service is
// crashed it idles, and resumes after Restart. The caller owns the goroutine.
func (s *Orders) RunRelay(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	for {
		sent, err := s.RelayOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if s.State() == StateStopped {
			return fmt.Errorf("relay: %w", ErrNotRunning)
		}
		if err == nil && sent == s.cfg.RelayBatch {
			continue // more may be waiting
		}
		// An error was reported as events; the next pass retries.
		if err := s.env.Sleeper.Sleep(ctx, every); err != nil {
			return nil
		}
	}
}
