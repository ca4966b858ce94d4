package challenge

// The challenges, in the order they build on each other, and their
// workloads.

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the challenges' databases
)

// All lists the challenges, in the order they build on each other.
func All() []*Challenge { return slices.Clone(challenges) }

// Find returns the challenge with id, or nil.
func Find(id string) *Challenge {
	for _, c := range challenges {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// createDB makes a challenge's database with its schema.
func createDB(ctx context.Context, path, schema string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, schema)
	return err
}

// ordersSent is how many orders the order challenges' shop sends.
const ordersSent = 30

var challenges = []*Challenge{
	{
		ID: "at-least-once", Title: "At least once: every order processed, across crashes", Level: 1,
		Summary: "commit only what you have done; a crash may repeat an order, never lose one",
		Topic:   "orders", Group: "billing", Partitions: 2,
		Workload: orders,
		Faults:   []string{FaultCommitAhead, FaultEffectAhead, FaultCommitAhead, FaultLeader, FaultEffectAhead},
		Grade:    gradeNothingLost,
	},
	{
		ID: "effect-once", Title: "The effect once: charge each order exactly once", Level: 2,
		Summary: "the redelivery at-least-once brings must not charge the buyer twice",
		Topic:   "orders", Group: "billing", Partitions: 2,
		Workload: orders,
		Faults:   []string{FaultCommitAhead, FaultEffectAhead, FaultCommitAhead, FaultLeader, FaultEffectAhead, FaultBetweenWrites, FaultBetweenWrites, FaultBetweenWrites},
		Schema: `CREATE TABLE charges (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	order_key TEXT NOT NULL,
	amount INTEGER NOT NULL
)`,
		Grade: gradeChargedOnce,
	},
	{
		ID: "in-order", Title: "In order: each account's balance as its updates say, across rebalances", Level: 3,
		Summary: "a paused consumer wakes up holding old updates; its writes must not undo newer ones",
		Topic:   "accounts", Group: "ledger", Partitions: 2,
		Workload: balanceUpdates,
		Faults:   []string{FaultEffectAhead, FaultPause, FaultLeader},
		Schema:   balancesSchema,
		Grade:    gradeInOrder,
	},
	{
		ID: "poison", Title: "A poison record: park it and keep the partition moving", Level: 4,
		Summary: "an order that can never be processed goes to a dead-letter topic after a few tries",
		Topic:   "orders", Group: "billing", Partitions: 2,
		Workload:    ordersWithPoison,
		Faults:      []string{FaultCommitAhead, FaultEffectAhead, FaultLeader},
		DeadLetters: "orders-dlt",
		GradeStalls: true,
		Grade:       gradePoison,
	},
	{
		ID: "sqs-once", Title: "SQS workers: each job's effect once, across kills and visibility timeouts", Level: 5,
		Summary: "a job outlasts its visibility timeout; a kill before the delete brings it back too",
		Group:   "workers", Queue: "jobs", QueueVisibility: jobVisibility, WorkMS: jobWorkMS,
		Workload: jobs,
		Faults:   []string{FaultBetweenWrites, FaultLeader, FaultBetweenWrites, FaultBetweenWrites},
		Schema: `CREATE TABLE charges (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	job    TEXT NOT NULL,
	amount INTEGER NOT NULL
)`,
		Grade: gradeJobsOnce,
	},
}

// The sqs-once queue: each job's work takes longer than the queue's
// visibility timeout, so a worker that does not extend it sees the job
// handed to another worker while it still works on it.
const (
	jobsSent      = 12
	jobVisibility = 300 * time.Millisecond
	jobWorkMS     = 500
)

// jobs is the sqs-once workload: job-1 to job-12.
func jobs(*rand.Rand) []ShopRecord {
	var out []ShopRecord
	for i := 1; i <= jobsSent; i++ {
		out = append(out, ShopRecord{Key: "job-" + strconv.Itoa(i), Value: "job-" + strconv.Itoa(i)})
	}
	return out
}

// orders is the order challenges' workload: order-1 to order-30.
func orders(*rand.Rand) []ShopRecord {
	var out []ShopRecord
	for i := 1; i <= ordersSent; i++ {
		out = append(out, ShopRecord{Key: "order-" + strconv.Itoa(i), Value: "order " + strconv.Itoa(i)})
	}
	return out
}

// balanceAccounts and balanceUpdatesSent shape the in-order workload: six
// accounts, forty updates between them in an order drawn from the seed.
const (
	balanceAccounts    = 6
	balanceUpdatesSent = 40
)

// balanceUpdates is the in-order workload: each update sets an account's
// balance, "seq=3 balance=450", the seq counting that account's updates
// from 1. No account has the same balance twice, so a balance written
// names the update it came from.
func balanceUpdates(rng *rand.Rand) []ShopRecord {
	seq := make([]int, balanceAccounts)
	used := make([]map[int]bool, balanceAccounts)
	var out []ShopRecord
	for range balanceUpdatesSent {
		a := rng.IntN(balanceAccounts)
		seq[a]++
		if used[a] == nil {
			used[a] = map[int]bool{}
		}
		b := 100 + 10*rng.IntN(990)
		for used[a][b] {
			b = 100 + 10*rng.IntN(990)
		}
		used[a][b] = true
		out = append(out, ShopRecord{Key: fmt.Sprintf("account-%d", a+1), Value: fmt.Sprintf("seq=%d balance=%d", seq[a], b)})
	}
	return out
}

// balancesSchema is the in-order database: the program's balances, and
// the lab's own list of every balance written, kept by triggers inside
// the program's transactions.
const balancesSchema = `CREATE TABLE balances (
	account TEXT PRIMARY KEY,
	balance INTEGER NOT NULL,
	seq     INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE mqlab_writes (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	account TEXT NOT NULL,
	balance INTEGER NOT NULL,
	at_ms   INTEGER NOT NULL
);
CREATE TRIGGER mqlab_inserted AFTER INSERT ON balances BEGIN
	INSERT INTO mqlab_writes (account, balance, at_ms)
	VALUES (NEW.account, NEW.balance, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER mqlab_updated AFTER UPDATE OF balance ON balances BEGIN
	INSERT INTO mqlab_writes (account, balance, at_ms)
	VALUES (NEW.account, NEW.balance, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END`

// ordersWithPoison is the poison workload: thirty orders with amounts,
// two of which (drawn from the seed, never the first few) carry an amount
// no program can read.
func ordersWithPoison(rng *rand.Rand) []ShopRecord {
	first := 4 + rng.IntN(ordersSent/2-4)
	second := ordersSent/2 + rng.IntN(ordersSent/2-3)
	var out []ShopRecord
	for i := 1; i <= ordersSent; i++ {
		amount := strconv.Itoa(100 + 10*rng.IntN(90))
		if i == first || i == second {
			amount = poisonAmount
		}
		out = append(out, ShopRecord{Key: "order-" + strconv.Itoa(i), Value: fmt.Sprintf("order %d amount=%s", i, amount)})
	}
	return out
}

// poisonAmount is what a poison order carries for its amount.
const poisonAmount = "four-fifty"
