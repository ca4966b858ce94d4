package source

import (
	"slices"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/tui/internal/labtest"
)

func TestViewOfTables(t *testing.T) {
	snap := labtest.Outbox()
	ts := ViewOf(&snap).Tables
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
