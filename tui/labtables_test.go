package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/source"
)

// outboxSnapshot is a lab snapshot with the orders service in outbox mode
// (its relay has sent two of three rows), a wallet that keeps its dedupe
// table in a second database, and a crashed payments service.
func outboxSnapshot() lab.Snapshot {
	outboxCols := []string{"id", "message_id", "topic", "msg_key", "payload", "status", "attempts", "created_at", "sent_at", "last_error"}
	return lab.Snapshot{Services: []lab.ServiceState{
		{Name: "orders", State: "up", Mode: "outbox", Tables: []lab.TableState{
			{Name: "orders.customers", DB: "orders", Columns: []string{"id", "name"}, Rows: [][]string{{"7", "Asha"}}, Total: 1},
			{Name: "orders.orders", DB: "orders", Columns: []string{"id", "user_id", "item", "amount", "status", "created_at"},
				Rows: [][]string{{"881", "7", "phone", "450", "placed", "2026-11-30 05:01:02.345"}}, Total: 1},
			{Name: "orders.outbox", DB: "orders", Columns: outboxCols, Rows: [][]string{
				{"1", "orders-1", "orders", "881", `{"order":881,"amount":450}`, "sent", "1", "2026-11-30 05:01:02.345", "2026-11-30 05:01:02.401", "NULL"},
				{"2", "orders-2", "orders", "882", `{"order":882,"amount":120}`, "sent", "2", "2026-11-30 05:01:02.500", "2026-11-30 05:01:03.010", "reply lost"},
				{"3", "orders-3", "orders", "883", `{"order":883,"amount":99}`, "pending", "0", "2026-11-30 05:01:03.200", "NULL", "NULL"},
			}, Total: 3},
		}},
		{Name: "wallet", State: "up", Mode: "dedupe-elsewhere", Tables: []lab.TableState{
			{Name: "wallet.wallets", DB: "wallet", Columns: []string{"user_id", "balance", "version", "updated_at"},
				Rows: [][]string{{"7", "45", "1", "2026-11-30 05:01:04.000"}}, Total: 1},
			{Name: "wallet.processed_messages", DB: "wallet-dedupe", Columns: []string{"message_id", "processed_at"},
				Rows: [][]string{{"orders-1", "2026-11-30 05:01:04.000"}}, Total: 1},
		}},
		{Name: "payments", State: "crashed", Tables: []lab.TableState{
			{Name: "payments.charges", DB: "payments", Error: "database is closed"},
		}},
	}}
}

func TestViewOfTables(t *testing.T) {
	snap := outboxSnapshot()
	ts := source.ViewOf(&snap).Tables
	var got []string
	for _, tb := range ts {
		got = append(got, tb.Name)
	}
	want := []string{"orders.outbox", "wallet.processed_messages (in wallet-dedupe)", "wallet.wallets",
		"payments.charges · payments crashed", "orders.orders", "orders.customers"}
	if !slices.Equal(got, want) {
		t.Fatalf("tables %q, want %q (what changes first, the seeded customers last)", got, want)
	}
	ob := ts[0]
	if cols := strings.Join(ob.Columns, " "); !strings.HasPrefix(cols, "id msg_key status attempts sent_at message_id") || len(ob.Columns) != 10 {
		t.Errorf("outbox columns %q: want id, msg_key, status, attempts, sent_at first and all 10 kept", cols)
	}
	if r := ob.Rows[2]; r[2] != "pending" || r[1] != "883" || r[4] != "NULL" || ob.Total != 3 {
		t.Errorf("outbox row 3 %q of %d: want 883 pending, not sent", r, ob.Total)
	}
	if r := ob.Rows[0]; r[4] != "05:01:02.4" {
		t.Errorf("outbox row 1 sent_at %q, want the lab time of day 05:01:02.4", r[4])
	}
	if ch := ts[3]; len(ch.Rows) != 0 || ch.Note != "could not read the table: database is closed" {
		t.Errorf("charges %+v: want the reason it could not be read", ch)
	}
}

// The services panel at the widths it gets on 80- and 120-column screens:
// the outbox keeps its status column, and says how many columns it hides.
func TestServicesGoldens(t *testing.T) {
	snap := outboxSnapshot()
	v := source.ViewOf(&snap)
	ctx := newContext(newFakeSource(v), draw.NewStyles(draw.DefaultTheme), DefaultKeyMap())
	ctx.State = &v
	for _, c := range []struct{ w, h int }{{38, 24}, {58, 24}} {
		p := newServicesPanel(ctx)
		p.SetSize(c.w, c.h)
		got := p.View()
		checkSize(t, "services", got, c.w, c.h)
		if !strings.Contains(got, "pending") || !strings.Contains(got, "sent") {
			t.Errorf("services at %d columns hides the outbox status:\n%s", c.w, got)
		}
		golden(t, fmtName("services_outbox", c.w, c.h), got)
	}
}
