package lab

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/services"
)

// sql prints the rows as a readable table, in the result and in the
// timeline; a query that cannot run says why and leaves no trace.
func TestSQLCommandPrintsATable(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "service start orders mode=commit-then-publish",
		"order 881", `order 882 amount=1200 item="blue phone"`)
	res := mustRun(t, l, `sql orders "SELECT id, item, amount, status FROM orders ORDER BY id"`)[0]
	want := []string{
		"id  | item       | amount | status",
		"--- | ---------- | ------ | ------",
		"881 | phone      | 450    | placed",
		"882 | blue phone | 1200   | placed",
		"(2 rows)",
	}
	if !reflect.DeepEqual(res.Lines, want) {
		t.Errorf("sql printed\n%s\nwant\n%s", strings.Join(res.Lines, "\n"), strings.Join(want, "\n"))
	}
	var inTimeline []string
	for _, e := range l.Snapshot().Timeline {
		if e.Kind == EventOutcome && strings.Contains(e.Text, "|") {
			inTimeline = append(inTimeline, e.Text)
		}
	}
	if !reflect.DeepEqual(inTimeline, want[:4]) {
		t.Errorf("timeline has %q", inTimeline)
	}

	before := len(l.Snapshot().Timeline)
	for _, tc := range []struct{ line, want string }{
		{`sql orders "SELECT * FROM nope"`, "no such table: nope (1); the tables of orders are orders, outbox, customers"},
		{`sql orders "SELECT id FROM orders; SELECT 1"`, "one statement only"},
		{`sql orders "WITH x AS (SELECT 1) DELETE FROM orders"`, "read-only"},
		{`sql wallet "SELECT 1"`, "no wallet service is running; start it with service start wallet"},
	} {
		if _, err := l.Exec(ctxFor(t, 10*time.Second), tc.line); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
	}
	if res := mustRun(t, l, `sql orders "SELECT count(*) AS n FROM orders"`)[0]; !reflect.DeepEqual(res.Lines, []string{"n", "-", "2", "(1 row)"}) {
		t.Errorf("the orders table changed: %q", res.Lines)
	}
	if after := len(l.Snapshot().Timeline); after != before+5 {
		t.Errorf("timeline grew from %d to %d; the failed queries should leave no trace", before, after)
	}
}

// The wallet's dedupe table in a second database is found by sql and rows.
func TestSQLFindsTheSecondDatabase(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "service start wallet strategy=dedupe-elsewhere")
	w, _ := l.world()
	h, ok := w.handler("wallet")
	if !ok {
		t.Fatal("no handler for wallet")
	}
	if err := h.Handle(ctxFor(t, 10*time.Second), services.Message{ID: "cashback-881", Key: "881", Value: "order=881 cashback=50"}); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, l, `sql wallet "SELECT message_id FROM processed_messages"`, "expect rows(wallet.processed_messages) == 1")[0]
	if len(res.Lines) < 4 || !strings.Contains(res.Lines[0], "wallet-dedupe") || res.Lines[3] != "cashback-881" {
		t.Errorf("sql wallet printed %q", res.Lines)
	}
}

// Failed service commands leave the lab, services and tables included,
// as it was.
func TestFailedServiceCommandsLeaveTheLabAsItWas(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "service start orders mode=outbox crash=after-commit", "order 881",
		"service start payments")
	before := stateOf(l)
	if len(before.services) == 0 {
		t.Fatal("the snapshot shows no services")
	}
	for _, tc := range []struct{ line, want string }{
		{"service start orders", "orders is already running (mode outbox, crashed); service restart orders brings a crashed one back, service stop orders ends it"},
		{"service restart orders crash=after-credit", "crash=after-credit: orders in mode outbox has the crash points after-commit, before-mark, after-publish"},
		{"service restart payments crash=after-publish", "crash=after-publish: payments has one crash point, after-charge"},
		{"service start checkout crash=after-commit", "crash=after-commit: checkout in mode sync has no crash points"},
		{`sql orders "SELECT * FROM ordrs"`, "no such table: ordrs"},
		{`sql orders "SELECT * FROM orders WHERE"`, "incomplete input"},
		{"expect rows(orders.ordres) == 1", `rows(orders.ordres): orders has no table "ordres" (it has orders, outbox, customers)`},
		{"expect rows(orders.orders, stauts='placed') == 1", "no such column: stauts"},
		{"expect rows(orders.orders, 1=1; DROP TABLE orders) == 1", "';' is not allowed"},
		{"wait rows(payments.chargse) == 1", `payments has no table "chargse" (it has charges)`},
	} {
		_, err := l.Exec(ctxFor(t, 10*time.Second), tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.line, err, tc.want)
		}
		if after := stateOf(l); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s changed the lab:\nbefore %+v\nafter  %+v", tc.line, before, after)
		}
	}
}

// Every statement a service runs is in the timeline with its SQL and
// arguments, and so is what the service did.
func TestServiceEventsInTheTimeline(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	sub := l.Subscribe(4096)
	defer sub.Close()
	mustRun(t, l, "topic create orders partitions=1", "service start orders mode=commit-then-publish", "order 881 user=7")
	var insert *ServiceEvent
	var kinds []string
	for done := false; !done; {
		select {
		case e := <-sub.C:
			if e.Service == nil {
				continue
			}
			if e.Kind == EventSQL && strings.HasPrefix(e.Service.SQL, "INSERT INTO orders") {
				insert = e.Service
				if !strings.Contains(e.Text, "VALUES (881, 7, 'phone', 450, 'placed'") {
					t.Errorf("timeline text %q does not show the arguments", e.Text)
				}
			}
			if e.Kind == EventService {
				kinds = append(kinds, e.Service.Kind)
			}
		default:
			done = true
		}
	}
	if insert == nil || insert.Service != "orders" || insert.RowsAffected != 1 || len(insert.Args) != 5 || insert.Args[0] != int64(881) {
		t.Errorf("the INSERT event: %+v", insert)
	}
	if !reflect.DeepEqual(kinds, []string{"order-placed", "published"}) {
		t.Errorf("service events %q", kinds)
	}
	h := l.History()
	if len(h) != 1 || h[0].MsgID != "msg-881" || h[0].Client != "orders" || h[0].Key != "881" || h[0].Acks != "all" || h[0].Offset != 0 {
		t.Errorf("history %+v; want msg-881 from orders, key 881, acks=all, at offset 0", h)
	}
}

// The snapshot carries each service's tables: columns, the newest rows
// and the count.
func TestSnapshotShowsServiceTables(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "service start orders mode=outbox", "order 881 count=25",
		"wait rows(orders.outbox, status='sent') == 25")
	var outbox *TableState
	var orders ServiceState
	for _, s := range l.Snapshot().Services {
		if s.Name == "orders" {
			orders = s
		}
	}
	for i, tb := range orders.Tables {
		if tb.Name == "orders.outbox" {
			outbox = &orders.Tables[i]
		}
	}
	if orders.State != "up" || orders.Mode != "outbox" || orders.Started != "service start orders mode=outbox" || outbox == nil {
		t.Fatalf("orders in the snapshot: %+v", orders)
	}
	if outbox.Total != 25 || len(outbox.Rows) != SnapshotRows || outbox.Columns[1] != "message_id" || outbox.DB != "orders" {
		t.Fatalf("outbox: total %d, %d rows, columns %v", outbox.Total, len(outbox.Rows), outbox.Columns)
	}
	if first, last := outbox.Rows[0], outbox.Rows[SnapshotRows-1]; first[1] != "msg-886" || last[1] != "msg-905" || last[5] != "sent" {
		t.Errorf("outbox rows from %v to %v; want the newest 20, msg-886 to msg-905, sent", first, last)
	}
	mustRun(t, l, "service stop orders")
	s := l.Snapshot().Services
	if len(s) != 1 || s[0].State != "stopped" || len(s[0].Tables) != 0 {
		t.Errorf("after stop: %+v", s)
	}
	mustRun(t, l, "expect state(orders) == stopped", "expect state(wallet) == stopped")
}

// A service's side effects, each with its message id, reach the checker:
// the wallet without a dedupe table credits a redelivery twice.
func TestServiceEffectsReachTheChecker(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	for _, tc := range []struct {
		strategy string
		want     int
	}{{"none", 1}, {"dedupe-table", 0}} {
		t.Run(tc.strategy, func(t *testing.T) {
			l := newLab(t)
			mustRun(t, l, "service start wallet strategy="+tc.strategy)
			w, _ := l.world()
			h, ok := w.handler("wallet")
			if !ok {
				t.Fatal("no handler for wallet")
			}
			if _, ok := w.handler("orders"); ok {
				t.Error("a handler for orders, which is not running and takes no deliveries")
			}
			m := services.Message{ID: "cashback-881", Key: "881", Value: "order=881 user=42 cashback=50"}
			for range 2 {
				if err := h.Handle(ctxFor(t, 10*time.Second), m); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := l.Check(ctxFor(t, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if rep.DuplicateEffects != tc.want {
				t.Errorf("duplicate_effects %d, want %d", rep.DuplicateEffects, tc.want)
			}
			balance := map[string]string{"none": "100", "dedupe-table": "50"}[tc.strategy]
			mustRun(t, l, "expect duplicate_effects == "+[]string{"0", "1"}[tc.want],
				`expect rows(wallet.wallets, user_id=42 AND balance=`+balance+`) == 1`)
		})
	}
}

// The lab creates no topic for a service: a publish to a missing topic
// fails and says what to create; the outbox relay retries until it can.
func TestServicesPublishOnlyToTopicsThatExist(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	res := mustRun(t, l, "service start orders mode=commit-then-publish", "order 881")
	if !strings.Contains(res[0].Lines[0], "there is no topic orders yet, so its publishes fail until topic create orders partitions=1") {
		t.Errorf("start said %q", res[0].Lines)
	}
	if got := res[1].Lines[0]; !strings.Contains(got, "order 881 committed, but its event msg-881 was not published") ||
		!strings.Contains(got, `publish msg-881: failed: unknown topic "orders": create it with topic create orders partitions=1 (the lab creates no topic for the orders service)`) {
		t.Errorf("order said %q", got)
	}
	mustRun(t, l, "service stop orders", "service start orders mode=outbox", "order 881",
		"wait rows(orders.outbox, last_error IS NOT NULL) == 1",
		"topic create orders partitions=1",
		"wait rows(orders.outbox, status='sent') == 1",
		"expect hwm(orders/0) == 1",
		"expect rows(orders.outbox, attempts >= 2) == 1")
}

// Services end with their cluster: a new cluster has none, and the relay's
// goroutine is gone (TestMain's goleak checks every test; the serviceset
// tests check that Close, which retiring a world calls, stops it).
func TestServicesEndWithTheCluster(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "service start orders mode=outbox", "service start payments",
		"service start checkout mode=queued threads=4", "order 881", "wait rows(orders.outbox, status='sent') == 1")
	mustRun(t, l, "cluster nodes=3")
	if s := l.Snapshot().Services; len(s) != 0 {
		t.Errorf("services after a new cluster: %+v", s)
	}
	if _, err := l.Exec(context.Background(), `sql orders "SELECT 1"`); err == nil || !strings.Contains(err.Error(), "no orders service is running") {
		t.Errorf("sql after a new cluster: %v", err)
	}
	mustRun(t, l, "expect state(orders) == stopped")
}

// An order to a crashed service is a result, not a script error; a
// count of orders stops being placed at the crash.
func TestOrdersToACrashedService(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	res := mustRun(t, l, "topic create orders partitions=1", "service start orders mode=publish-then-commit crash=after-publish",
		"order 881 count=3", "expect rows(orders.orders) == 0", "expect hwm(orders/0) == 1")
	lines := res[2].Lines
	if len(lines) != 3 || !strings.Contains(lines[0], "msg-881 published to orders/0 at offset 0, then orders crashed before storing order 881") ||
		!strings.Contains(lines[1], "order 882 not placed: orders is crashed") || !strings.Contains(lines[1], "service restart orders brings it back") {
		t.Errorf("order said %q", lines)
	}
	// A customer that does not exist fails the commit after the announcement.
	res = mustRun(t, l, "service restart orders", "order 900 user=5000", "expect rows(orders.orders) == 0", "expect hwm(orders/0) == 2")
	if got := res[1].Lines[0]; !strings.Contains(got, "msg-900 published to orders/0 at offset 1, but order 900 was never stored") ||
		!strings.Contains(got, "FOREIGN KEY constraint failed") {
		t.Errorf("order 900 said %q", got)
	}
	if _, err := l.Exec(context.Background(), "order 901"); err != nil || errors.Is(err, ErrNotAvailable) {
		t.Errorf("order 901: %v", err)
	}
}

// Checkout charges through whichever payments service runs, and in queued
// mode publishes the rest of the work to a topic receipts when that is what
// exists (checkout_test.go has the queue).
func TestCheckoutChargesThroughPayments(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l, "topic create receipts partitions=1", "service start payments", "service start checkout mode=queued threads=2")
	w, _ := l.world()
	co, err := w.svc.Checkout()
	if err != nil || co == nil {
		t.Fatalf("the running checkout: %v, %v", co, err)
	}
	buy := func(id int64) (services.CheckoutResult, error) {
		return co.Buy(ctxFor(t, 30*time.Second), services.Purchase{OrderID: id})
	}
	if res, err := buy(881); err != nil || !res.OK || !res.Charged {
		t.Fatalf("buy 881: %+v, %v", res, err)
	}
	mustRun(t, l, "expect rows(payments.charges, idempotency_key='881') == 1", "expect hwm(receipts/0) == 1",
		"expect rows(checkout.checkouts, status='ok') == 1", "service stop payments")
	if res, err := buy(882); err == nil || res.Charged || !strings.Contains(err.Error(), "payments was stopped") {
		t.Errorf("buy 882 without payments: %+v, %v", res, err)
	}
	mustRun(t, l, "service start payments")
	if res, err := buy(883); err != nil || !res.OK {
		t.Errorf("buy 883 after payments came back: %+v, %v", res, err)
	}
	h := l.History()
	if len(h) != 2 || h[0].Client != "checkout" || h[0].Topic != "receipts" || h[0].MsgID != "checkout-881" {
		t.Errorf("history %+v", h)
	}
	s := l.Snapshot().Services
	if len(s) != 2 || s[0].Name != "checkout" || s[0].Checkout == nil || s[0].Checkout.OK != 2 || s[0].Checkout.Errors != 1 {
		t.Errorf("snapshot services %+v", s)
	}
}
