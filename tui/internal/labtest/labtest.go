// Package labtest holds what the screen's and the sources' tests share:
// a fast lab, checking for leaked goroutines, running orders and waiting
// for the view to show something.
package labtest

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lessons"
	"github.com/mqlab/mqlab/tui/view"
)

// RaftLeaks are goroutines that outlive a test by design. Raft's
// leadership transfer runs goroutines it does not track; they end within
// an election timeout.
var RaftLeaks = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leadershipTransfer"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/raft.(*Raft).leaderLoop.func2"),
	// teatest waits for a SIGINT for as long as the test binary runs.
	goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
}

// CheckLeaks fails the test if it leaves goroutines behind; it runs after
// every other cleanup (the lab's Close among them).
func CheckLeaks(t *testing.T) {
	opts := append([]goleak.Option{goleak.IgnoreCurrent()}, RaftLeaks...)
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// NewLab starts a fast lab of three nodes, closed when the test ends.
func NewLab(t testing.TB) *lab.Lab {
	t.Helper()
	l, err := lab.New(lab.Options{Nodes: 3, Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// MustExec runs an order on src, failing the test if it fails.
func MustExec(t testing.TB, src view.Source, o view.Order) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := src.Exec(ctx, o)
	if err != nil {
		t.Fatalf("%s: %v", o.Line, err)
	}
	return out
}

// Eventually polls the source's view until cond holds, and returns it.
func Eventually(t *testing.T, src view.Source, what string, cond func(v view.State) bool) view.State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := src.View()
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s; last view: nodes %+v partitions %+v", what, v.Nodes, v.Partitions)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// PartitionOf is the partition named name in v, or nil.
func PartitionOf(v view.State, name string) *view.Partition {
	for i := range v.Partitions {
		if v.Partitions[i].Name == name {
			return &v.Partitions[i]
		}
	}
	return nil
}

// NodeOf is the node id in v, or nil.
func NodeOf(v view.State, id string) *view.Node {
	for i := range v.Nodes {
		if v.Nodes[i].ID == id {
			return &v.Nodes[i]
		}
	}
	return nil
}

// Lesson is testdata/kill-the-leader.md: three committed orders; a
// prediction, then a task to kill the leader; a task to restart it.
func Lesson(t testing.TB) *lessons.Lesson {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	les, err := lessons.Load(filepath.Join(filepath.Dir(here), "testdata", "kill-the-leader.md"))
	if err != nil {
		t.Fatal(err)
	}
	return les
}

// DemoStart is the fixed clock of the hand-built states some tests draw.
var DemoStart = time.Date(2025, 3, 14, 12, 3, 30, 0, time.UTC)

// FlashSale is a lab snapshot after a burst of orders: billing's lag rose
// while the load ran faster than the consumer, then drained; a queue
// stayed empty; two workers retried the same failures, one without
// jitter and one with full jitter.
func FlashSale() lab.Snapshot {
	t0 := DemoStart.Add(-20 * time.Second)
	var lag, empty []int64
	for i := 0; i < 80; i++ { // 20 s of lab time: 10 s of load, then the drain
		v := int64(i * 60)
		if i >= 40 {
			v = max(0, 2400-int64(i-40)*70)
		}
		lag = append(lag, v)
		empty = append(empty, 0)
	}
	snap := lab.Snapshot{Time: DemoStart, Series: []lab.SeriesState{
		{Name: "depth(receipts)", Func: "depth", Of: "receipts", Unit: "msgs", Start: t0, Every: lab.SeriesEvery, Values: empty},
		{Name: "lag(billing)", Func: "lag", Of: "billing", Unit: "msgs", Start: t0, Every: lab.SeriesEvery, Values: lag},
	}}
	rnd := rand.New(rand.NewSource(3))
	for m := 0; m < 30; m++ {
		for _, c := range []string{"w-plain", "w-jitter"} {
			failed := t0 // every message failed at once: the payments service went down
			for a := 2; a <= 4; a++ {
				d := time.Second << (a - 2)
				if c == "w-jitter" {
					d = time.Duration(rnd.Int63n(int64(d)))
				}
				snap.Retries = append(snap.Retries, lab.RetryState{Client: c, Message: fmt.Sprintf("%s-%d", c, m), Attempt: a, Failed: failed, Delay: d, Arrived: failed.Add(d)})
				failed = failed.Add(d + 10*time.Millisecond) // the retry ran and failed again
			}
		}
	}
	return snap
}

// Outbox is a lab snapshot with the orders service in outbox mode
// (its relay has sent two of three rows), a wallet that keeps its dedupe
// table in a second database, and a crashed payments service.
func Outbox() lab.Snapshot {
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
