package challenge

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An order the kill left half written is named, once, with the tables
// its first commit and the rest went to; an order charged again by a
// program that keeps nothing beside its charges is the plain failure.
func TestGradeSplitWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "effect-once.db")
	if err := createDB(ctxFor(t, time.Minute), path, Find("effect-once").Schema); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE processed (order_key TEXT PRIMARY KEY)`,
		// order-1: marked, never charged; order-2: charged twice, then
		// marked; order-3: charged twice, nothing else; order-4: fine.
		`INSERT INTO processed VALUES ('order-1'), ('order-2'), ('order-4')`,
		`INSERT INTO charges (order_key, amount) VALUES ('order-2', 450), ('order-2', 450), ('order-3', 450), ('order-3', 450), ('order-4', 450)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := &Record{
		Keys: []string{"order-1", "order-2", "order-3", "order-4"}, DB: path,
		Timeline: []entry{{time.Second, "the lab kills run 1 (SIGKILL to its process group)"}},
		Between: []betweenKill{
			{Key: "order-1", Run: 1, Tables: []string{"processed"}, At: time.Second},
			{Key: "order-2", Run: 2, Tables: []string{"charges"}, At: time.Second},
			{Key: "order-3", Run: 3, Tables: []string{"charges"}, At: time.Second},
			{Key: "order-4", Run: 4, Tables: []string{"processed"}, At: time.Second},
		},
	}
	got := gradeChargedOnce(r)
	var whats []string
	for _, f := range got {
		whats = append(whats, f.What+" "+strings.Join(f.Items, ","))
	}
	all := strings.Join(whats, "\n")
	for _, want := range []string{
		"order-1's writes were not one transaction: the lab killed run 1 once a row in processed was committed and before a row in charges was, and the order was never charged",
		"order-2's writes were not one transaction: the lab killed run 2 once a row in charges was committed and before a row in processed was, and the order was charged 2 times",
		"1 order was charged more than once: each came again after its commit was lost and the program killed, and the charge was made again order-3",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the failures lack %q:\n%s", want, all)
		}
	}
	if len(got) != 3 || strings.Contains(all, "order-4") || strings.Contains(all, "never charged order-1") {
		t.Errorf("want exactly the three failures above, each order once:\n%s", all)
	}
}

// A job charged more than once is named with its count, a job never
// charged is named apart, a message left in the queue apart again, and a
// job charged once is not named at all.
func TestGradeJobsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sqs-once.db")
	if err := createDB(ctxFor(t, time.Minute), path, Find("sqs-once").Schema); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO charges (job, amount) VALUES ('job-1', 450), ('job-2', 450), ('job-2', 450), ('job-2', 450)`); err != nil {
		t.Fatal(err)
	}
	r := &Record{Keys: []string{"job-1", "job-2", "job-3"}, DB: path,
		Timeline:  []entry{{time.Second, "run 1 reports processed job-2"}},
		Undeleted: []string{"job-2, received 4 times"}}
	got := gradeJobsOnce(r)
	if len(got) != 3 {
		t.Fatalf("got %d failures, want 3: %+v", len(got), got)
	}
	if !strings.Contains(got[2].What, "1 job's message was still in the queue") || strings.Join(got[2].Items, "|") != "job-2, received 4 times" {
		t.Errorf("the third failure should name job-2's message, left in the queue: %+v", got[2])
	}
	if !strings.Contains(got[0].What, "1 job was charged more than once") || strings.Join(got[0].Items, "|") != "job-2, charged 3 times" || len(got[0].Around) == 0 {
		t.Errorf("the first failure should name job-2, charged 3 times, with what happened around it: %+v", got[0])
	}
	if !strings.Contains(got[1].What, "1 job was never charged") || strings.Join(got[1].Items, "|") != "job-3" {
		t.Errorf("the second failure should name job-3, never charged: %+v", got[1])
	}
}

// A program inside a write holds the database's write lock, and the lab
// sees it without waiting; a program between writes does not.
func TestWriteLocked(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	path := filepath.Join(t.TempDir(), "in-order.db")
	if err := createDB(ctx, path, Find("in-order").Schema); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if locked, err := writeLocked(ctx, path); err != nil || locked {
		t.Fatalf("no write under way: writeLocked = %v, %v; want false", locked, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO balances (account, balance) VALUES ('account-1', 100)`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if locked, err := writeLocked(ctx, path); err != nil || !locked {
		t.Errorf("inside a write: writeLocked = %v, %v; want true", locked, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("writeLocked waited %v for the lock; it must not wait", d)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if locked, err := writeLocked(ctx, path); err != nil || locked {
		t.Errorf("after the write: writeLocked = %v, %v; want false", locked, err)
	}
}
