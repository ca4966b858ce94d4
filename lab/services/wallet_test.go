package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func newWallet(t *testing.T, env *testEnv, st Strategy, crash ...string) *Wallet {
	t.Helper()
	w, err := NewWallet(context.Background(), WalletConfig{Strategy: st, Crash: crash}, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, w)
	return w
}

// cashbackMessage is the ₹50 cashback for order 881, for user 42; the
// absolute strategy needs the value to set instead.
func cashbackMessage(st Strategy) Message {
	if st == StrategyAbsolute {
		return Message{ID: "msg-881", Key: "881", Value: "user=42 balance=50 version=1"}
	}
	return Message{ID: "msg-881", Key: "881", Value: `{"event":"order_placed","order_id":881,"user_id":42,"amount":450}`}
}

func balance(t *testing.T, w *Wallet) int64 {
	t.Helper()
	b, err := w.Balance(context.Background(), 42)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWalletRedelivery(t *testing.T) {
	want := map[Strategy]int64{
		StrategyNone:            100, // ₹50 twice
		StrategyDedupeTable:     50,
		StrategyDedupeElsewhere: 50, // without a crash the split tables still work
		StrategyConditional:     50,
		StrategyAbsolute:        50,
	}
	for _, st := range Strategies {
		t.Run(string(st), func(t *testing.T) {
			ctx := context.Background()
			env := newTestEnv()
			w := newWallet(t, env, st)
			m := cashbackMessage(st)
			for i := range 2 {
				if err := w.Handle(ctx, m); err != nil {
					t.Fatalf("delivery %d: %v", i+1, err)
				}
			}
			if got := balance(t, w); got != want[st] {
				t.Errorf("balance ₹%d, want ₹%d", got, want[st])
			}
			effects, dups := len(env.rec.kind(EventEffect)), len(env.rec.kind(EventDuplicate))
			if st == StrategyNone {
				if effects != 2 || dups != 0 {
					t.Errorf("effects %d duplicates %d, want 2 and 0", effects, dups)
				}
			} else if effects != 1 || dups != 1 {
				t.Errorf("effects %d duplicates %d, want 1 and 1", effects, dups)
			}
		})
	}
}

// A crash after the credit and before the ack: the broker redelivers.
func TestWalletRedeliveryAfterACrashBetweenCreditAndAck(t *testing.T) {
	want := map[Strategy]int64{
		StrategyNone:            100,
		StrategyDedupeTable:     50,
		StrategyDedupeElsewhere: 100, // the pitfall: the id never reached the second database
		StrategyConditional:     50,
		StrategyAbsolute:        50,
	}
	for _, st := range Strategies {
		t.Run(string(st), func(t *testing.T) {
			ctx := context.Background()
			env := newTestEnv()
			w := newWallet(t, env, st, "after-credit")
			m := cashbackMessage(st)
			if err := w.Handle(ctx, m); !errors.Is(err, ErrCrashed) {
				t.Fatalf("first delivery = %v, want ErrCrashed", err)
			}
			if err := w.Handle(ctx, m); !errors.Is(err, ErrNotRunning) {
				t.Fatalf("delivery while crashed = %v, want ErrNotRunning", err)
			}
			if err := w.Restart(); err != nil {
				t.Fatal(err)
			}
			if err := w.Handle(ctx, m); err != nil {
				t.Fatalf("redelivery: %v", err)
			}
			if got := balance(t, w); got != want[st] {
				t.Errorf("balance ₹%d, want ₹%d", got, want[st])
			}
		})
	}
}

func TestWalletShowsTheReferenceSQL(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	w := newWallet(t, env, StrategyDedupeTable)
	m := cashbackMessage(StrategyDedupeTable)
	for range 2 {
		if err := w.Handle(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range env.rec.sql() {
		if !strings.HasPrefix(s, "CREATE") && !strings.HasPrefix(s, "INSERT INTO wallets") {
			got = append(got, s)
		}
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"BEGIN\nINSERT INTO processed_messages (message_id, processed_at) VALUES ('msg-881', '2025-11-28 12:00:00.000')\nUPDATE wallets SET balance = balance + 50, version = version + 1, updated_at = '2025-11-28 12:00:00.000' WHERE user_id = 42\nCOMMIT",
		"BEGIN\nINSERT INTO processed_messages (message_id, processed_at) VALUES ('msg-881', '2025-11-28 12:00:00.000')\nROLLBACK",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("SQL events lack\n%s\ngot\n%s", want, text)
		}
	}
	var dupInsert Event
	for _, e := range env.rec.kind(EventSQL) {
		if strings.HasPrefix(e.SQL, "INSERT INTO processed_messages") && e.Err != "" {
			dupInsert = e
		}
	}
	if !strings.Contains(dupInsert.Err, "UNIQUE constraint failed") {
		t.Errorf("the duplicate insert's event should carry SQLite's error, got %+v", dupInsert)
	}
	if n := count(t, w, "processed_messages", "message_id = 'msg-881'"); n != 1 {
		t.Errorf("processed_messages has %d rows for msg-881", n)
	}
}

func TestWalletDedupeElsewhereUsesASecondDatabase(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	w := newWallet(t, env, StrategyDedupeElsewhere)
	if got := fmt.Sprint(w.Databases()); got != "[wallet wallet-dedupe]" {
		t.Fatalf("databases %s", got)
	}
	if err := w.Handle(ctx, cashbackMessage(StrategyDedupeElsewhere)); err != nil {
		t.Fatal(err)
	}
	tables := map[string]string{}
	for _, tb := range w.Tables() {
		tables[tb.Name] = tb.DB
	}
	if tables["processed_messages"] != "wallet-dedupe" || tables["wallets"] != "wallet" {
		t.Errorf("tables %v", tables)
	}
	if n := count(t, w, "processed_messages", ""); n != 1 {
		t.Errorf("processed_messages rows %d, want 1", n)
	}
	if _, err := w.Query(ctx, "SELECT * FROM processed_messages"); err == nil {
		t.Errorf("the wallet's own database should have no processed_messages")
	}
	res, err := w.QueryDB(ctx, "wallet-dedupe", "SELECT message_id FROM processed_messages")
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "msg-881" {
		t.Errorf("QueryDB = %+v, %v", res, err)
	}
	dbs := map[string]bool{}
	for _, e := range env.rec.kind(EventSQL) {
		dbs[e.DB] = true
	}
	if !dbs["wallet"] || !dbs["wallet-dedupe"] {
		t.Errorf("SQL events name databases %v, want both", dbs)
	}
}

func TestWalletAbsoluteIgnoresStaleCopies(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	w := newWallet(t, env, StrategyAbsolute)
	for i, v := range []string{"balance=150 version=3", "balance=100 version=2", "balance=150 version=3"} {
		if err := w.Handle(ctx, Message{ID: fmt.Sprint("m", i), Key: "42", Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	if got := balance(t, w); got != 150 {
		t.Errorf("balance %d, want 150", got)
	}
	err := w.Handle(ctx, Message{ID: "m9", Key: "881", Value: "order 881 placed"})
	if !errors.Is(err, ErrBadMessage) {
		t.Errorf("a delta message under absolute = %v, want ErrBadMessage", err)
	}
}

func TestWalletConditionalGuardsByOrder(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	w := newWallet(t, env, StrategyConditional)
	// Two different messages about one order: the status guard still credits once.
	for _, id := range []string{"msg-881", "msg-881-retry"} {
		if err := w.Handle(ctx, Message{ID: id, Key: "881"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := balance(t, w); got != 50 {
		t.Errorf("balance %d, want 50", got)
	}
	env.rec.hasSQL(t, "UPDATE cashbacks SET status = 'credited', updated_at = '2025-11-28 12:00:00.000' WHERE order_id = 881 AND status = 'pending'")
	if n := count(t, w, "cashbacks", "order_id = 881 AND status = 'credited'"); n != 1 {
		t.Errorf("cashback row not credited")
	}
}
