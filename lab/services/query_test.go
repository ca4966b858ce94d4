package services

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// labWithServices is a registry holding orders (outbox mode, two orders,
// one relayed) and a dedupe-elsewhere wallet.
func labWithServices(t *testing.T) (*Registry, *Orders) {
	t.Helper()
	ctx := context.Background()
	env := newTestEnv()
	o := newOrders(t, env, Outbox)
	w := newWallet(t, env, StrategyDedupeElsewhere)
	reg := NewRegistry()
	for _, s := range []Service{o, w} {
		if err := reg.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	place(t, ctx, o, 881, 882)
	env.pub.outcomes = []Outcome{Acknowledged, Failed}
	o.RelayOnce(ctx) // 881 sent, 882 stays pending
	if err := w.Handle(ctx, Message{ID: "msg-881", Key: "881"}); err != nil {
		t.Fatal(err)
	}
	return reg, o
}

func TestQueryRejectsWrites(t *testing.T) {
	ctx := context.Background()
	reg, o := labWithServices(t)
	for _, q := range []string{
		"DELETE FROM outbox",
		"UPDATE outbox SET status = 'sent'",
		"SELECT * FROM orders; DROP TABLE orders",
		"WITH doomed AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN (SELECT id FROM doomed)",
		"INSERT INTO orders VALUES (1, 42, 'phone', 450, 'placed', 'now')",
		"PRAGMA query_only = 0",
		"ATTACH DATABASE 'x.db' AS x",
		"",
		"SELECT 'unterminated",
	} {
		_, err := reg.Query(ctx, "orders", q)
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%q: err = %v, want ErrReadOnly", q, err)
			continue
		}
		t.Logf("%q → %v", q, err)
	}
	_, err := reg.Query(ctx, "orders", "DELETE FROM outbox")
	if !strings.Contains(err.Error(), "only SELECT") {
		t.Errorf("message should say only SELECT is allowed: %v", err)
	}
	// WITH … DELETE passes the first-word check; SQLite's read-only
	// connection stops it.
	_, err = reg.Query(ctx, "orders", "WITH d AS (SELECT 1) DELETE FROM orders")
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "readonly database") {
		t.Errorf("WITH … DELETE: %v, want SQLite's read-only refusal", err)
	}
	if n := count(t, o, "orders", ""); n != 2 {
		t.Errorf("orders has %d rows after the attempts, want 2", n)
	}
	res, err := reg.Query(ctx, "orders", "select id, status from orders order by id;")
	if err != nil || len(res.Rows) != 2 || res.Rows[0][0] != int64(881) || res.Rows[1][1] != "placed" {
		t.Errorf("a plain SELECT = %+v, %v", res, err)
	}
	if !strings.Contains(res.String(), "881 | placed") {
		t.Errorf("rendered:\n%s", res)
	}
}

// The read-only connection refuses writes by itself, without the text check.
func TestReadOnlyConnectionRefusesWritesWithoutTheTextCheck(t *testing.T) {
	ctx := context.Background()
	_, o := labWithServices(t)
	for _, q := range []string{
		"DELETE FROM orders",
		"SELECT 1; DELETE FROM orders",
	} {
		if _, err := o.db.readQuery(ctx, q); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%q on the read-only connection: %v", q, err)
		}
	}
	// Turning query_only off does not make a mode=ro connection writable.
	if _, err := o.db.ro.ExecContext(ctx, "PRAGMA query_only = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.db.readQuery(ctx, "DELETE FROM orders"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("after PRAGMA query_only = 0: %v", err)
	}
	if n := count(t, o, "orders", ""); n != 2 {
		t.Errorf("orders has %d rows, want 2", n)
	}
}

func TestCountGuardsItsWhereClause(t *testing.T) {
	ctx := context.Background()
	reg, _ := labWithServices(t)
	n, err := reg.Count(ctx, "orders.outbox", "status='pending'")
	if err != nil || n != 1 {
		t.Errorf("rows(orders.outbox, status='pending') = %d, %v; want 1", n, err)
	}
	if n, err := reg.Count(ctx, "orders.outbox", ""); err != nil || n != 2 {
		t.Errorf("rows(orders.outbox) = %d, %v", n, err)
	}
	if n, err := reg.Count(ctx, "orders.outbox", "payload LIKE '%;%' OR status = 'a;b'"); err != nil || n != 0 {
		t.Errorf("a ';' inside a string literal is fine: %d, %v", n, err)
	}
	if n, err := reg.Count(ctx, "wallet.processed_messages", "message_id = 'msg-881'"); err != nil || n != 1 {
		t.Errorf("rows(wallet.processed_messages) = %d, %v (the table lives in wallet-dedupe)", n, err)
	}
	for _, where := range []string{
		"1=1; DROP TABLE outbox",
		"status='pending') OR (1",
		"status='pending' -- and more",
		"(status='pending'",
		"id IN (SELECT id FROM outbox); DELETE FROM outbox",
	} {
		if _, err := reg.Count(ctx, "orders.outbox", where); !errors.Is(err, ErrReadOnly) {
			t.Errorf("WHERE %q: %v, want ErrReadOnly", where, err)
		}
	}
	if _, err := reg.Count(ctx, "orders.nope", ""); !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "orders, outbox, customers") {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := reg.Count(ctx, "outbox", ""); err == nil {
		t.Errorf("a table without its service should be refused")
	}
	if _, err := reg.Count(ctx, "ordrs.outbox", ""); err == nil || !strings.Contains(err.Error(), "running: orders, wallet") {
		t.Errorf("unknown service: %v", err)
	}
	if n, _ := reg.Count(ctx, "orders.outbox", "status='pending'"); n != 1 {
		t.Errorf("outbox changed under the attempts")
	}
}

func TestTablesAndRows(t *testing.T) {
	ctx := context.Background()
	reg, o := labWithServices(t)
	var names []string
	for _, tb := range o.Tables() {
		names = append(names, tb.Name)
	}
	if strings.Join(names, ",") != "orders,outbox,customers" {
		t.Errorf("tables %v", names)
	}
	res, err := o.Rows(ctx, "outbox", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Columns[1] != "message_id" || res.Rows[0][1] != "msg-882" {
		t.Errorf("newest outbox row = %v %v", res.Columns, res.Rows)
	}
	res, err = o.Rows(ctx, "outbox", 10)
	if err != nil || len(res.Rows) != 2 || res.Rows[0][1] != "msg-881" || res.Rows[0][5] != "sent" || res.Rows[1][9] != "failed: broker says failed" {
		t.Errorf("outbox rows oldest first = %v, %v", res.Rows, err)
	}
	res, err = reg.Query(ctx, "wallet-dedupe", "SELECT count(*) AS n FROM processed_messages")
	if err != nil || res.Rows[0][0] != int64(1) {
		t.Errorf("query on the second database: %+v, %v", res, err)
	}
	res, err = reg.Query(ctx, "orders", "SELECT * FROM customers")
	if err != nil || !res.Truncated || len(res.Rows) != MaxRows {
		t.Errorf("1000 customers should be cut at %d: %d rows, truncated %v, %v", MaxRows, len(res.Rows), res.Truncated, err)
	}
	if err := reg.Close(); err != nil {
		t.Fatal(err)
	}
	if o.State() != StateStopped {
		t.Errorf("state after close %s", o.State())
	}
}
