package source

import (
	"slices"
	"sort"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/view"
)

// tableColumns puts first, for the tables the lessons watch, the columns
// a learner looks at; the services panel drops the last columns when it
// is narrow, so what is left is what tells the story (an outbox row's
// status, a wallet's balance, a charge's repeats).
var tableColumns = map[string][]string{
	"orders.outbox":             {"id", "msg_key", "status", "attempts", "sent_at", "message_id", "created_at", "last_error"},
	"orders.orders":             {"id", "user_id", "item", "amount", "status", "created_at"},
	"wallet.wallets":            {"user_id", "balance", "version", "updated_at"},
	"wallet.processed_messages": {"message_id", "processed_at"},
	"wallet.cashbacks":          {"order_id", "user_id", "amount", "status", "updated_at"},
	"payments.charges":          {"id", "order_id", "amount", "status", "repeats", "idempotency_key", "message_id"},
	"checkout.checkouts":        {"order_id", "status", "stage", "latency_ms", "charged", "error"},
}

// tableRank orders the tables: what the lessons watch change first (the
// outbox going pending → sent, the dedupe table, the balances, the
// charges), then the rest, and what a service was seeded with last.
var tableRank = map[string]int{
	"orders.outbox": 1, "wallet.processed_messages": 2, "wallet.wallets": 3, "payments.charges": 4,
	"wallet.cashbacks": 5, "orders.orders": 6, "checkout.checkouts": 7,
	"orders.customers": 99, "checkout.stock": 99,
}

// timeCell is how services store lab times (lab/services): shown as the
// time of day, which is what the header's clock shows.
const timeCell = "2006-01-02 15:04:05.000"

// tablesOf maps the services' SQL tables, in tableRank's order (others
// in the middle, as the services list them), the columns a learner
// watches first.
func tablesOf(snap *lab.Snapshot) []view.Table {
	var out []view.Table
	var rank []int
	for _, svc := range snap.Services {
		for _, ts := range svc.Tables {
			out = append(out, tableOf(svc, ts))
			r, ok := tableRank[ts.Name]
			if !ok {
				r = 50
			}
			rank = append(rank, r)
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank[idx[a]] < rank[idx[b]] })
	sorted := make([]view.Table, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

func tableOf(svc lab.ServiceState, ts lab.TableState) view.Table {
	t := view.Table{Name: ts.Name, Total: int(ts.Total)}
	if ts.DB != "" && ts.DB != svc.Name {
		t.Name += " (in " + ts.DB + ")"
	}
	if svc.State != "" && svc.State != "up" {
		t.Name += " · " + svc.Name + " " + svc.State
	}
	if ts.Error != "" {
		t.Note = "could not read the table: " + ts.Error
		return t
	}
	order := columnOrder(tableColumns[ts.Name], ts.Columns)
	t.Columns = make([]string, len(order))
	for i, c := range order {
		t.Columns[i] = ts.Columns[c]
	}
	t.Rows = make([][]string, len(ts.Rows))
	for r, row := range ts.Rows {
		cells := make([]string, len(order))
		for i, c := range order {
			if c < len(row) {
				cells[i] = cellText(row[c])
			}
		}
		t.Rows[r] = cells
	}
	return t
}

// columnOrder lists the indexes of cols: those named in first, in its
// order, then the rest as the table has them.
func columnOrder(first, cols []string) []int {
	out := make([]int, 0, len(cols))
	for _, name := range first {
		if i := slices.Index(cols, name); i >= 0 {
			out = append(out, i)
		}
	}
	for i, name := range cols {
		if !slices.Contains(first, name) {
			out = append(out, i)
		}
	}
	return out
}

// cellText shortens a lab time to the time of day; other cells stay as
// the table has them.
func cellText(v string) string {
	if len(v) == len(timeCell) {
		if t, err := time.Parse(timeCell, v); err == nil {
			return t.Format("15:04:05.0")
		}
	}
	return v
}
