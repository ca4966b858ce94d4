package services

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync/atomic"
)

// KeyFrom says where the payment worker takes its idempotency key from.
type KeyFrom string

// Idempotency key sources for Payments.Handle.
const (
	KeyFromOrder   KeyFrom = "order"   // the order id: the right choice
	KeyFromMessage KeyFrom = "message" // the message id: fine while one order is one message
	KeyFromAttempt KeyFrom = "attempt" // a fresh key per attempt: the pitfall, a redelivery charges again
)

// PaymentsCrashPoints lists the payments service's crash points:
// after-charge is after the charge committed and before the answer left.
var PaymentsCrashPoints = []string{"after-charge"}

// PaymentsConfig configures NewPayments. Zero fields take the defaults shown.
type PaymentsConfig struct {
	Name    string   // "payments"
	Amount  int64    // ₹ charged when a message names no amount; 450
	KeyFrom KeyFrom  // KeyFromOrder
	Crash   []string // crash points to arm
	Writes  float64  // write ceiling, transactions per second of lab time; 0 = none
}

// ChargeRequest asks for one charge. Key is the idempotency key.
type ChargeRequest struct {
	Key       string
	OrderID   int64
	UserID    int64
	Amount    int64
	MessageID string // the message that caused it, if any: for the checker's effects
}

// ChargeResult is the charge the provider made, or remembered.
type ChargeResult struct {
	ChargeID int64
	Key      string
	Amount   int64
	// Repeat: the key was seen before; this is the original charge and
	// nothing more was charged.
	Repeat bool
}

// Payments stands for another company's payment provider: a charges table
// keyed by idempotency key. A repeat of a key is answered with the original
// charge and charges nothing; a repeat with different parameters is refused.
type Payments struct {
	*base
	cfg      PaymentsConfig
	db       *database
	attempts atomic.Int64
}

// NewPayments starts a payments service with its own fresh database.
func NewPayments(ctx context.Context, cfg PaymentsConfig, env Env) (*Payments, error) {
	if cfg.Name == "" {
		cfg.Name = "payments"
	}
	if cfg.Amount <= 0 {
		cfg.Amount = 450
	}
	if cfg.KeyFrom == "" {
		cfg.KeyFrom = KeyFromOrder
	}
	if !slices.Contains([]KeyFrom{KeyFromOrder, KeyFromMessage, KeyFromAttempt}, cfg.KeyFrom) {
		return nil, fmt.Errorf("%s: unknown key source %q (want order, message or attempt)", cfg.Name, cfg.KeyFrom)
	}
	s := &Payments{base: newBase(cfg.Name, env, PaymentsCrashPoints), cfg: cfg}
	if err := s.armAll(cfg.Crash); err != nil {
		return nil, err
	}
	db, err := s.addDB(ctx, cfg.Name, cfg.Writes, []string{"charges"}, []string{
		`CREATE TABLE charges (
  id INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  order_id INTEGER,
  user_id INTEGER NOT NULL,
  amount INTEGER NOT NULL CHECK (amount > 0),
  status TEXT NOT NULL,
  message_id TEXT,
  created_at TEXT NOT NULL,
  repeats INTEGER NOT NULL DEFAULT 0
)`,
	})
	if err != nil {
		return nil, err
	}
	s.db = db
	return s, nil
}

// Charge charges once per idempotency key. A repeat returns the original
// charge with Repeat set; a repeat with another amount or user is refused
// with ErrKeyReused.
func (s *Payments) Charge(ctx context.Context, r ChargeRequest) (ChargeResult, error) {
	if err := s.up(); err != nil {
		return ChargeResult{}, err
	}
	if r.Key == "" {
		return ChargeResult{}, fmt.Errorf("%s: a charge needs an idempotency key", s.name)
	}
	res := ChargeResult{Key: r.Key}
	var order sql.NullInt64
	if r.OrderID != 0 {
		order = sql.NullInt64{Int64: r.OrderID, Valid: true}
	}
	var msgID sql.NullString
	if r.MessageID != "" {
		msgID = sql.NullString{String: r.MessageID, Valid: true}
	}
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		n, err := s.db.exec(ctx, tx,
			`INSERT INTO charges (idempotency_key, order_id, user_id, amount, status, message_id, created_at) VALUES (?, ?, ?, ?, 'succeeded', ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
			r.Key, order, r.UserID, r.Amount, msgID, labTime(s.env.Clock()))
		if err != nil {
			return err
		}
		res.Repeat = n == 0
		var user int64
		if _, err := s.db.query(ctx, tx, func(rows *sql.Rows) error {
			return rows.Scan(&res.ChargeID, &res.Amount, &user)
		}, `SELECT id, amount, user_id FROM charges WHERE idempotency_key = ?`, r.Key); err != nil {
			return err
		}
		if !res.Repeat {
			return nil
		}
		if res.Amount != r.Amount || user != r.UserID {
			return fmt.Errorf("%w: key %s was charge #%d of ₹%d to user %d, now ₹%d to user %d", ErrKeyReused, r.Key, res.ChargeID, res.Amount, user, r.Amount, r.UserID)
		}
		_, err = s.db.exec(ctx, tx, `UPDATE charges SET repeats = repeats + 1 WHERE idempotency_key = ?`, r.Key)
		return err
	})
	if err != nil {
		return ChargeResult{}, fmt.Errorf("%s: charge %s: %w", s.name, r.Key, err)
	}
	if res.Repeat {
		s.emit(Event{Kind: EventDuplicate, MessageID: r.MessageID, Key: r.Key,
			Detail: fmt.Sprintf("key %s seen before: answered with charge #%d of ₹%d, charged nothing", r.Key, res.ChargeID, res.Amount)})
	} else {
		s.emit(Event{Kind: EventEffect, MessageID: r.MessageID, Key: r.Key,
			Detail: fmt.Sprintf("charged ₹%d to user %d (key %s, charge #%d)", r.Amount, r.UserID, r.Key, res.ChargeID)})
	}
	if err := s.crashAt("after-charge", fmt.Sprintf("charge #%d is committed; the answer never left", res.ChargeID), Message{ID: r.MessageID, Key: r.Key}); err != nil {
		return res, err
	}
	return res, nil
}

// Handle is the payment worker's work for one delivery ("order 881
// placed"): it charges the order, with the idempotency key KeyFrom says.
// Fields read from the value: order, user, amount (defaults: the message
// key, 42, the configured amount). nil means done: ack.
func (s *Payments) Handle(ctx context.Context, m Message) error {
	f := parseFields(m.Value)
	order, err := f.num("order", keyInt(m.Key, 0))
	if err != nil {
		return err
	}
	user, err := f.num("user", 42)
	if err != nil {
		return err
	}
	amount, err := f.num("amount", s.cfg.Amount)
	if err != nil {
		return err
	}
	if amount <= 0 {
		return fmt.Errorf("%w: amount ₹%d", ErrBadMessage, amount)
	}
	var key string
	switch s.cfg.KeyFrom {
	case KeyFromOrder:
		key = fmt.Sprint(order)
		if order == 0 {
			key = m.Key
		}
	case KeyFromMessage:
		key = m.ID
	case KeyFromAttempt:
		key = fmt.Sprintf("%s-attempt-%d", m.ID, s.attempts.Add(1))
	}
	if key == "" {
		return fmt.Errorf("%w: no order id and no key to charge by", ErrBadMessage)
	}
	_, err = s.Charge(ctx, ChargeRequest{Key: key, OrderID: order, UserID: user, Amount: amount, MessageID: m.ID})
	return err
}

// Charged returns the number of charges and the total ₹ charged.
func (s *Payments) Charged(ctx context.Context) (count, total int64, err error) {
	res, err := s.db.readQuery(ctx, `SELECT count(*), coalesce(sum(amount), 0) FROM charges`)
	if err != nil {
		return 0, 0, err
	}
	count, _ = res.Rows[0][0].(int64)
	total, _ = res.Rows[0][1].(int64)
	return count, total, nil
}
