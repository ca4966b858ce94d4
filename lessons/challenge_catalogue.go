package lessons

// The challenges, in the order they build on each other, and how each
// grades.

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	_ "modernc.org/sqlite" // the challenges' databases
)

// Challenges lists the challenges, in the order they build on each other.
func Challenges() []*Challenge { return slices.Clone(challenges) }

// FindChallenge returns the challenge with id, or nil.
func FindChallenge(id string) *Challenge {
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

var challenges = []*Challenge{
	{
		ID: "at-least-once", Title: "At least once: every order processed, across crashes", Level: 1,
		Summary:    "commit only what you have done; a crash may repeat an order, never lose one",
		Orders:     30,
		Partitions: 2,
		Grade:      gradeNothingLost,
	},
	{
		ID: "effect-once", Title: "The effect once: charge each order exactly once", Level: 2,
		Summary:    "the redelivery at-least-once brings must not charge the buyer twice",
		Orders:     30,
		Partitions: 2,
		Schema: `CREATE TABLE charges (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	order_key TEXT NOT NULL,
	amount INTEGER NOT NULL
)`,
		Grade: gradeChargedOnce,
	},
}

// gradeChargedOnce fails every order the database charged more than once,
// and every order it never charged.
func gradeChargedOnce(r *ChallengeRecord) []Failure {
	db, err := sql.Open("sqlite", "file:"+r.DB+"?mode=ro")
	if err != nil {
		return []Failure{{What: "the challenge's database could not be read: " + err.Error()}}
	}
	defer db.Close()
	rows, err := db.Query(`SELECT order_key, count(*) FROM charges GROUP BY order_key`)
	if err != nil {
		return []Failure{{What: "the charges table could not be read: " + err.Error()}}
	}
	defer rows.Close()
	charged := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			return []Failure{{What: "the charges table could not be read: " + err.Error()}}
		}
		charged[key] = n
	}
	var twice, never []string
	for _, key := range r.Orders {
		switch n := charged[key]; {
		case n == 0:
			never = append(never, key)
		case n > 1:
			twice = append(twice, key)
		}
	}
	var out []Failure
	if len(twice) > 0 {
		out = append(out, Failure{
			What:   fmt.Sprintf("%d orders were charged more than once: each came again after a kill between its charge and its commit, and the charge was made again", len(twice)),
			Orders: twice,
			Around: r.around(twice[0]),
		})
	}
	if len(never) > 0 {
		out = append(out, Failure{
			What:   fmt.Sprintf("%d orders were never charged", len(never)),
			Orders: never,
			Around: r.around(never[0]),
		})
	}
	return out
}

// gradeNothingLost fails every order the workload sent that the program
// never reported processed.
func gradeNothingLost(r *ChallengeRecord) []Failure {
	var lost []string
	for _, key := range r.Orders {
		if len(r.Processed[key]) == 0 {
			lost = append(lost, key)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return []Failure{{
		What:   fmt.Sprintf("%d of %d orders were never processed: the group committed past them before the program finished them, and a crash in between lost them", len(lost), len(r.Orders)),
		Orders: lost,
		Around: r.around(lost[0]),
	}}
}
