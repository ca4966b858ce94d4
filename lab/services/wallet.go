package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Strategy is how the wallet makes a repeated delivery harmless, or not.
type Strategy string

// The wallet's idempotency strategies.
const (
	// StrategyNone credits on every delivery: a redelivery pays ₹50 again.
	StrategyNone Strategy = "none"
	// StrategyDedupeTable inserts the message id into processed_messages in
	// the same transaction as the credit; a duplicate-key error means
	// "already done".
	StrategyDedupeTable Strategy = "dedupe-table"
	// StrategyDedupeElsewhere keeps processed_messages in a second database:
	// a crash between the credit and the id's insert (after-credit) lets the
	// redelivery credit again.
	StrategyDedupeElsewhere Strategy = "dedupe-elsewhere"
	// StrategyConditional guards the credit with UPDATE cashbacks SET
	// status = 'credited' WHERE order_id = ? AND status = 'pending'.
	StrategyConditional Strategy = "conditional"
	// StrategyAbsolute sets the balance to a value carried by the message,
	// with a version, instead of adding a delta; older or equal versions are
	// ignored.
	StrategyAbsolute Strategy = "absolute"
)

// Strategies lists the wallet's strategies, for help and suggestions.
var Strategies = []Strategy{StrategyNone, StrategyDedupeTable, StrategyDedupeElsewhere, StrategyConditional, StrategyAbsolute}

// CrashPoints lists the wallet's crash points. after-credit is after the
// credit committed and before Handle returns (so before the consumer acks);
// with dedupe-elsewhere it falls between the two databases' writes.
func (Strategy) CrashPoints() []string { return []string{"after-credit"} }

// WalletConfig configures NewWallet. Zero fields take the defaults shown.
type WalletConfig struct {
	Name        string   // "wallet"
	Strategy    Strategy // StrategyNone
	Cashback    int64    // ₹ credited when a message names no cashback; 50
	DefaultUser int64    // user credited when a message names none; 42 (its wallet starts at ₹0)
	Crash       []string // crash points to arm
	Writes      float64  // write ceiling per database, transactions per second of lab time; 0 = none
}

// Wallet is the wallet service: tables wallets, processed_messages (in a
// second database, "<name>-dedupe", with dedupe-elsewhere) and cashbacks.
type Wallet struct {
	*base
	cfg    WalletConfig
	db     *database
	dedupe *database // processed_messages: db itself, or the second database
}

// NewWallet starts a wallet service with its own fresh database(s).
func NewWallet(ctx context.Context, cfg WalletConfig, env Env) (*Wallet, error) {
	if cfg.Name == "" {
		cfg.Name = "wallet"
	}
	if cfg.Strategy == "" {
		cfg.Strategy = StrategyNone
	}
	if !slices.Contains(Strategies, cfg.Strategy) {
		return nil, fmt.Errorf("%s: unknown strategy %q (want none, dedupe-table, dedupe-elsewhere, conditional or absolute)", cfg.Name, cfg.Strategy)
	}
	if cfg.Cashback <= 0 {
		cfg.Cashback = 50
	}
	if cfg.DefaultUser == 0 {
		cfg.DefaultUser = 42
	}
	s := &Wallet{base: newBase(cfg.Name, env, cfg.Strategy.CrashPoints()), cfg: cfg}
	if err := s.armAll(cfg.Crash); err != nil {
		return nil, err
	}
	processed := `CREATE TABLE processed_messages (
  message_id TEXT PRIMARY KEY,
  processed_at TEXT
)`
	schema := []string{
		`CREATE TABLE wallets (
  user_id INTEGER PRIMARY KEY,
  balance INTEGER NOT NULL,
  version INTEGER NOT NULL,
  updated_at TEXT
)`,
		`CREATE TABLE cashbacks (
  order_id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL,
  amount INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'credited')),
  updated_at TEXT
)`,
		fmt.Sprintf(`INSERT INTO wallets (user_id, balance, version) VALUES (%d, 0, 0)`, cfg.DefaultUser),
	}
	tables := []string{"wallets", "processed_messages", "cashbacks"}
	elsewhere := cfg.Strategy == StrategyDedupeElsewhere
	if elsewhere {
		tables = []string{"wallets", "cashbacks"}
	} else {
		schema = append(schema, processed)
	}
	db, err := s.addDB(ctx, cfg.Name, cfg.Writes, tables, schema)
	if err != nil {
		return nil, err
	}
	s.db, s.dedupe = db, db
	if elsewhere {
		d, err := s.addDB(ctx, cfg.Name+"-dedupe", cfg.Writes, []string{"processed_messages"}, []string{processed})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.dedupe = d
	}
	return s, nil
}

// Strategy returns the wallet's strategy.
func (s *Wallet) Strategy() Strategy { return s.cfg.Strategy }

// cashback is what one delivery asks the wallet to do.
type cashback struct {
	order, user, amount int64
	balance, version    int64 // absolute strategy
	absolute            bool
}

func (s *Wallet) parse(m Message) (cashback, error) {
	f := parseFields(m.Value)
	var c cashback
	var err error
	if c.order, err = f.num("order", keyInt(m.Key, 0)); err != nil {
		return c, err
	}
	if c.user, err = f.num("user", s.cfg.DefaultUser); err != nil {
		return c, err
	}
	if c.amount, err = f.num("cashback", s.cfg.Cashback); err != nil {
		return c, err
	}
	if f.has("balance") || f.has("version") {
		if c.balance, err = f.num("balance", 0); err != nil {
			return c, err
		}
		if c.version, err = f.num("version", 0); err != nil {
			return c, err
		}
		c.absolute = f.has("balance") && f.has("version")
	}
	return c, nil
}

// errAlreadyDone unwinds a transaction that found the delivery was a repeat.
type errAlreadyDone struct{ why string }

func (e errAlreadyDone) Error() string { return e.why }

// Handle applies one cashback delivery with the wallet's strategy. Fields
// read from the value (JSON or key=value words): order (default: the message
// key), user (42), cashback (₹50); balance and version for absolute. A nil
// error means done — including "already done" — so the consumer acks.
func (s *Wallet) Handle(ctx context.Context, m Message) error {
	if err := s.up(); err != nil {
		return err
	}
	c, err := s.parse(m)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, m.ID, err)
	}
	var effect string
	switch s.cfg.Strategy {
	case StrategyNone:
		effect, err = s.creditTx(ctx, c, nil)
	case StrategyDedupeTable:
		effect, err = s.creditTx(ctx, c, func(tx *sql.Tx) error {
			_, err := s.db.exec(ctx, tx, `INSERT INTO processed_messages (message_id, processed_at) VALUES (?, ?)`, m.ID, labTime(s.env.Clock()))
			if isDuplicateKey(err) {
				return errAlreadyDone{m.ID + " is already in processed_messages (the INSERT failed on the primary key): already done"}
			}
			return err
		})
	case StrategyDedupeElsewhere:
		return s.handleElsewhere(ctx, m, c)
	case StrategyConditional:
		if c.order == 0 {
			return fmt.Errorf("%s: %s: %w: the conditional strategy needs an order id (order= or a numeric key)", s.name, m.ID, ErrBadMessage)
		}
		effect, err = s.creditTx(ctx, c, func(tx *sql.Tx) error {
			now := labTime(s.env.Clock())
			if _, err := s.db.exec(ctx, tx, `INSERT INTO cashbacks (order_id, user_id, amount, status, updated_at) VALUES (?, ?, ?, 'pending', ?) ON CONFLICT (order_id) DO NOTHING`,
				c.order, c.user, c.amount, now); err != nil {
				return err
			}
			n, err := s.db.exec(ctx, tx, `UPDATE cashbacks SET status = 'credited', updated_at = ? WHERE order_id = ? AND status = 'pending'`, now, c.order)
			if err == nil && n == 0 {
				return errAlreadyDone{fmt.Sprintf("the cashback for order %d is no longer pending (the UPDATE changed 0 rows): already done", c.order)}
			}
			return err
		})
	case StrategyAbsolute:
		if !c.absolute {
			return fmt.Errorf("%s: %s: %w: the absolute strategy needs balance= and version= in the message", s.name, m.ID, ErrBadMessage)
		}
		effect, err = s.setAbsolute(ctx, c)
	}
	return s.finish(m, effect, err)
}

// finish reports the outcome of a delivery and passes the after-credit
// crash point.
func (s *Wallet) finish(m Message, effect string, err error) error {
	var done errAlreadyDone
	switch {
	case errors.As(err, &done):
		s.emit(Event{Kind: EventDuplicate, MessageID: m.ID, Key: m.Key, Detail: done.why + "; ack"})
		return nil
	case err != nil:
		return fmt.Errorf("%s: %s: %w", s.name, m.ID, err)
	}
	s.emit(Event{Kind: EventEffect, MessageID: m.ID, Key: m.Key, Detail: effect})
	return s.crashAt("after-credit", "the credit is committed; the delivery was never acknowledged", m)
}

// creditTx adds the cashback to the wallet, after guard, in one transaction.
func (s *Wallet) creditTx(ctx context.Context, c cashback, guard func(*sql.Tx) error) (string, error) {
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if guard != nil {
			if err := guard(tx); err != nil {
				return err
			}
		}
		return s.credit(ctx, tx, c)
	})
	return s.creditText(c), err
}

func (s *Wallet) creditText(c cashback) string {
	if c.order != 0 {
		return fmt.Sprintf("credited ₹%d cashback to user %d for order %d", c.amount, c.user, c.order)
	}
	return fmt.Sprintf("credited ₹%d cashback to user %d", c.amount, c.user)
}

// credit is the delta: balance = balance + cashback. A user without a wallet
// gets one.
func (s *Wallet) credit(ctx context.Context, tx *sql.Tx, c cashback) error {
	n, err := s.db.exec(ctx, tx, `UPDATE wallets SET balance = balance + ?, version = version + 1, updated_at = ? WHERE user_id = ?`,
		c.amount, labTime(s.env.Clock()), c.user)
	if err != nil || n > 0 {
		return err
	}
	_, err = s.db.exec(ctx, tx, `INSERT INTO wallets (user_id, balance, version, updated_at) VALUES (?, ?, 1, ?)`,
		c.user, c.amount, labTime(s.env.Clock()))
	return err
}

// handleElsewhere is the pitfall: check the second database, credit in the
// first, then record the id in the second. Two commits, no transaction
// spanning them.
func (s *Wallet) handleElsewhere(ctx context.Context, m Message, c cashback) error {
	seen := false
	if _, err := s.dedupe.query(ctx, s.dedupe.rw, func(*sql.Rows) error { seen = true; return nil },
		`SELECT message_id FROM processed_messages WHERE message_id = ?`, m.ID); err != nil {
		return fmt.Errorf("%s: %s: %w", s.name, m.ID, err)
	}
	if seen {
		return s.finish(m, "", errAlreadyDone{m.ID + " is in " + s.dedupe.name + ".processed_messages: already done"})
	}
	effect, err := s.creditTx(ctx, c, nil)
	if err != nil {
		return s.finish(m, effect, err)
	}
	s.emit(Event{Kind: EventEffect, MessageID: m.ID, Key: m.Key, Detail: effect})
	if err := s.crashAt("after-credit", "the credit is committed in "+s.db.name+"; "+m.ID+" was never recorded in "+s.dedupe.name, m); err != nil {
		return err
	}
	_, err = s.dedupe.writeOne(ctx, `INSERT INTO processed_messages (message_id, processed_at) VALUES (?, ?)`, m.ID, labTime(s.env.Clock()))
	if err != nil && !isDuplicateKey(err) {
		return fmt.Errorf("%s: %s: %w", s.name, m.ID, err)
	}
	return nil
}

// setAbsolute writes the balance the message carries, if its version is
// newer than the wallet's.
func (s *Wallet) setAbsolute(ctx context.Context, c cashback) (string, error) {
	effect := fmt.Sprintf("set user %d's balance to ₹%d at version %d", c.user, c.balance, c.version)
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		now := labTime(s.env.Clock())
		n, err := s.db.exec(ctx, tx, `UPDATE wallets SET balance = ?, version = ?, updated_at = ? WHERE user_id = ? AND version < ?`,
			c.balance, c.version, now, c.user, c.version)
		if err != nil || n > 0 {
			return err
		}
		var have int64
		found, err := s.db.query(ctx, tx, func(r *sql.Rows) error { return r.Scan(&have) },
			`SELECT version FROM wallets WHERE user_id = ?`, c.user)
		if err != nil {
			return err
		}
		if found > 0 {
			return errAlreadyDone{fmt.Sprintf("user %d's wallet is at version %d; version %d is not newer: a repeat or a stale copy, ignored", c.user, have, c.version)}
		}
		_, err = s.db.exec(ctx, tx, `INSERT INTO wallets (user_id, balance, version, updated_at) VALUES (?, ?, ?, ?)`, c.user, c.balance, c.version, now)
		return err
	})
	return effect, err
}

// Balance reads a user's wallet balance (0 when the user has none).
func (s *Wallet) Balance(ctx context.Context, user int64) (int64, error) {
	res, err := s.db.readQuery(ctx, `SELECT balance FROM wallets WHERE user_id = ?`, user)
	if err != nil {
		return 0, err
	}
	if len(res.Rows) == 0 {
		return 0, nil
	}
	b, _ := res.Rows[0][0].(int64)
	return b, nil
}
