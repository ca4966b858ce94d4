package challenge

// How each challenge grades what its program did.

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// gradeNothingLost fails every order the workload sent that the program
// never reported processed.
func gradeNothingLost(r *Record) []Failure {
	var lost []string
	for _, key := range r.Keys {
		if len(r.Processed[key]) == 0 {
			lost = append(lost, key)
		}
	}
	return r.failOrders(nil, fmt.Sprintf("%d of %d orders %s never processed: the group committed past them before the program finished them, and a crash in between lost them", len(lost), len(r.Keys), were(len(lost))), lost)
}

// failOrders adds to out a failure about the orders in items, with the
// timeline around the first of them; with no items, nothing.
func (r *Record) failOrders(out []Failure, what string, items []string) []Failure {
	if len(items) == 0 {
		return out
	}
	return append(out, Failure{What: what, Kind: "orders", Items: items, Around: r.around(items[0])})
}

// openDB opens a challenge's database to read what the program left; a
// failure to is itself the verdict.
func openDB(r *Record) (*sql.DB, []Failure) {
	db, err := sql.Open("sqlite", "file:"+r.DB+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, []Failure{{What: "the challenge's database could not be read: " + err.Error()}}
	}
	return db, nil
}

// gradeChargedOnce fails every order the database charged more than once,
// and every order it never charged.
func gradeChargedOnce(r *Record) []Failure {
	db, fail := openDB(r)
	if fail != nil {
		return fail
	}
	defer db.Close()
	charged := map[string]int{}
	err := eachRow(db, `SELECT order_key, count(*) FROM charges GROUP BY order_key`, func(rows *sql.Rows) error {
		var key string
		var n int
		err := rows.Scan(&key, &n)
		charged[key] = n
		return err
	})
	if err != nil {
		return []Failure{{What: "the charges table could not be read: " + err.Error()}}
	}
	out, split := r.splitWrites(db, charged)
	var twice, never []string
	for _, key := range r.Keys {
		switch n := charged[key]; {
		case split[key]:
		case n == 0:
			never = append(never, key)
		case n > 1:
			twice = append(twice, key)
		}
	}
	out = r.failOrders(out, counted(len(twice), "order was", "orders were")+" charged more than once: each came again after its commit was lost and the program killed, and the charge was made again", twice)
	return r.failOrders(out, counted(len(never), "order was", "orders were")+" never charged", never)
}

// splitWrites fails each order charged twice or never after a kill that
// landed right after the first commit naming it, when that commit was not
// all of its effect: it lacked the charge, or the program wrote more of
// the order later. Those orders' writes were two transactions, and split
// says which they are.
func (r *Record) splitWrites(db *sql.DB, charged map[string]int) ([]Failure, map[string]bool) {
	split := map[string]bool{}
	if len(r.Between) == 0 {
		return nil, split
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return []Failure{{What: "the database could not be read: " + err.Error()}}, split
	}
	defer conn.Close()
	keys := map[string]bool{}
	for _, b := range r.Between {
		keys[b.Key] = true
	}
	_, final, err := namedOrders(ctx, conn, keys)
	if err != nil {
		return []Failure{{What: "the database could not be read: " + err.Error()}}, split
	}
	var out []Failure
	for _, b := range r.Between {
		n := charged[b.Key]
		if n == 1 {
			continue
		}
		var rest []string
		for _, t := range final[b.Key] {
			if !slices.Contains(b.Tables, t) {
				rest = append(rest, t)
			}
		}
		if !slices.Contains(b.Tables, "charges") && !slices.Contains(rest, "charges") {
			rest = append(rest, "charges")
		}
		if len(rest) == 0 {
			continue // the charge alone, made again: the failure below says so
		}
		split[b.Key] = true
		outcome := "was never charged"
		if n > 1 {
			outcome = fmt.Sprintf("was charged %d times when it came again", n)
		}
		out = append(out, Failure{
			What: fmt.Sprintf("%s's writes were not one transaction: the lab killed run %d once %s was committed and before %s was, and the order %s; two writes that must both happen or neither belong in one transaction",
				b.Key, b.Run, inTables(b.Tables), inTables(rest), outcome),
			Kind: "orders", Items: []string{b.Key}, Around: r.near(b.At),
		})
	}
	return out, split
}

// gradeJobsOnce fails every job whose effect the database holds more
// than once, and every job it never holds.
func gradeJobsOnce(r *Record) []Failure {
	db, fail := openDB(r)
	if fail != nil {
		return fail
	}
	defer db.Close()
	done := map[string]int{}
	err := eachRow(db, `SELECT job, count(*) FROM charges GROUP BY job`, func(rows *sql.Rows) error {
		var key string
		var n int
		err := rows.Scan(&key, &n)
		done[key] = n
		return err
	})
	if err != nil {
		return []Failure{{What: "the charges table could not be read: " + err.Error()}}
	}
	var twice, never []string
	for _, key := range r.Keys {
		switch n := done[key]; {
		case n == 0:
			never = append(never, key)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s, charged %d times", key, n))
		}
	}
	var out []Failure
	if len(twice) > 0 {
		key, _, _ := strings.Cut(twice[0], ",")
		out = append(out, Failure{
			What: counted(len(twice), "job was", "jobs were") + " charged more than once: a job's message came back, because its visibility timeout ran out while a worker still worked on it or because the worker was killed before it deleted it, and the job was charged again",
			Kind: "jobs", Items: twice, Around: r.around(key),
		})
	}
	if len(never) > 0 {
		out = append(out, Failure{What: counted(len(never), "job was", "jobs were") + " never charged", Kind: "jobs", Items: never, Around: r.around(never[0])})
	}
	if len(r.Undeleted) > 0 {
		key, _, _ := strings.Cut(r.Undeleted[0], ",")
		out = append(out, Failure{
			What: counted(len(r.Undeleted), "job's message was", "jobs' messages were") + " still in the queue at the end, coming back again and again: its work outlasted the visibility timeout, the message went to another worker, and each delete carried the receipt handle of an earlier receive, which deletes nothing; extend the visibility while the job works",
			Kind: "jobs", Items: r.Undeleted, Around: r.around(key),
		})
	}
	return out
}

// eachRow runs query and hands each row to fn.
func eachRow(db *sql.DB, query string, fn func(*sql.Rows) error) error {
	rows, err := db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// gradeInOrder fails every balance written from an update older than one
// the account had already been given, and every account whose balance at
// the end is not what applying its updates one by one, in order, gives.
func gradeInOrder(r *Record) []Failure {
	u := sentUpdates(r.Sent)
	db, fail := openDB(r)
	if fail != nil {
		return fail
	}
	defer db.Close()
	back, backAt, strange, err := u.replayWrites(db, r.Start)
	if err != nil {
		return []Failure{{What: "the lab's list of writes (mqlab_writes) could not be read: " + err.Error() + "; leave that table and its triggers as the lab made them"}}
	}
	wrong, err := u.wrongAtEnd(db)
	if err != nil {
		return []Failure{{What: "the balances table could not be read: " + err.Error()}}
	}
	var out []Failure
	if len(back) > 0 {
		f := Failure{
			What: counted(len(back), "balance was", "balances were") + " written from an update older than one the account already had: the balance went back in time",
			Kind: "writes", Items: back,
		}
		if backAt >= 0 {
			f.Around = r.near(backAt)
		}
		out = append(out, f)
	}
	if len(wrong) > 0 {
		out = append(out, Failure{
			What: fmt.Sprintf("the final balance of %d of %d accounts is not what their updates applied in order give", len(wrong), len(u.accounts)),
			Kind: "accounts", Items: wrong,
		})
	}
	if len(strange) > 0 {
		out = append(out, Failure{
			What: counted(len(strange), "balance was", "balances were") + " written that no update carried: write the balance the update says",
			Kind: "writes", Items: strange,
		})
	}
	return out
}

// accountUpdates is what the in-order shop sent: which update each
// balance came from, and each account's balance once its updates are
// applied one by one, in order.
type accountUpdates struct {
	accounts []string               // in the order the shop first named them
	seqOf    map[string]map[int]int // account → balance → its update's seq
	final    map[string]int         // account → its last update's balance
}

// sentUpdates reads the updates out of the records the shop sent.
func sentUpdates(sent []ShopRecord) accountUpdates {
	u := accountUpdates{seqOf: map[string]map[int]int{}, final: map[string]int{}}
	for _, s := range sent {
		var seq, balance int
		if _, err := fmt.Sscanf(s.Value, "seq=%d balance=%d", &seq, &balance); err != nil {
			continue
		}
		if u.seqOf[s.Key] == nil {
			u.seqOf[s.Key] = map[int]int{}
			u.accounts = append(u.accounts, s.Key)
		}
		u.seqOf[s.Key][balance] = seq
		u.final[s.Key] = balance
	}
	return u
}

// replayWrites goes through the lab's list of every balance written, in
// order: back are the writes from an update older than one the account
// already had, the first of them at backAt (-1 for none), and strange the
// writes of a balance no update carried.
func (u accountUpdates) replayWrites(db *sql.DB, start time.Time) (back []string, backAt time.Duration, strange []string, err error) {
	highest := map[string]int{}
	backAt = -1
	err = eachRow(db, `SELECT account, balance, at_ms FROM mqlab_writes ORDER BY id`, func(rows *sql.Rows) error {
		var account string
		var balance int
		var atMS int64
		if err := rows.Scan(&account, &balance, &atMS); err != nil {
			return err
		}
		at := time.UnixMilli(atMS).Sub(start)
		seq, ok := u.seqOf[account][balance]
		switch {
		case !ok:
			strange = append(strange, fmt.Sprintf("%s set to %d at %.2fs", account, balance, at.Seconds()))
		case seq < highest[account]:
			back = append(back, fmt.Sprintf("%s seq %d (%d) after seq %d, at %.2fs", account, seq, balance, highest[account], at.Seconds()))
			if backAt < 0 {
				backAt = at
			}
		default:
			highest[account] = seq
		}
		return nil
	})
	return back, backAt, strange, err
}

// wrongAtEnd is every account whose balance in the program's table is
// not its last update's, saying which update the balance came from.
func (u accountUpdates) wrongAtEnd(db *sql.DB) ([]string, error) {
	got := map[string]int{}
	err := eachRow(db, `SELECT account, balance FROM balances`, func(rows *sql.Rows) error {
		var account string
		var balance int
		err := rows.Scan(&account, &balance)
		got[account] = balance
		return err
	})
	if err != nil {
		return nil, err
	}
	var wrong []string
	for _, a := range u.accounts {
		want := u.final[a]
		b, ok := got[a]
		switch {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("%s has no balance, want %d (seq %d)", a, want, u.seqOf[a][want]))
		case b != want:
			from := "which no update carried"
			if seq, ok := u.seqOf[a][b]; ok {
				from = fmt.Sprintf("seq %d's", seq)
			}
			wrong = append(wrong, fmt.Sprintf("%s ends at %d, %s, want %d (seq %d)", a, b, from, want, u.seqOf[a][want]))
		}
	}
	return wrong, nil
}

// poisonTries is the most attempts one run may make at a record before it
// parks it; the page asks for three.
const poisonTries = 5

// gradePoison fails a poison order never parked in the dead-letter topic
// or tried without bound, a good order parked, and every good order never
// processed.
func gradePoison(r *Record) []Failure {
	var poison []string
	for _, s := range r.Sent {
		if strings.HasSuffix(s.Value, "amount="+poisonAmount) {
			poison = append(poison, s.Key)
		}
	}
	parked := map[string]bool{}
	for _, d := range r.DeadLettered {
		parked[d.Key] = true
	}
	var out []Failure
	var unparked, endless, wrongly, claimed, lost []string
	for _, key := range poison {
		if !parked[key] {
			unparked = append(unparked, key)
		}
		tries := map[string]int{}
		for _, run := range r.Failed[key] {
			tries[run]++
		}
		for _, run := range slices.Sorted(maps.Keys(tries)) {
			if tries[run] > poisonTries {
				endless = append(endless, fmt.Sprintf("%s, tried %d times by %s", key, tries[run], run))
			}
		}
		if len(r.Processed[key]) > 0 {
			claimed = append(claimed, key)
		}
	}
	for _, key := range r.Keys {
		if slices.Contains(poison, key) {
			continue
		}
		if parked[key] {
			wrongly = append(wrongly, key)
		}
		if len(r.Processed[key]) == 0 {
			lost = append(lost, key)
		}
	}
	if len(endless) > 0 {
		out = append(out, Failure{
			What: fmt.Sprintf("a poison order was tried without bound: the page asks for at most 3 tries, the lab allows %d", poisonTries),
			Kind: "orders", Items: endless, Around: r.around(poison[0]),
		})
	}
	out = r.failOrders(out, counted(len(unparked), "poison order was", "poison orders were")+" never parked in the dead-letter topic (MQLAB_DEAD_LETTERS)", unparked)
	what := fmt.Sprintf("%d of %d good orders %s never processed", len(lost), len(r.Keys)-len(poison), were(len(lost)))
	if r.Stalled {
		what += ": the partition stopped at a poison order and everything behind it waited"
	}
	out = r.failOrders(out, what, lost)
	out = r.failOrders(out, "a poison order was reported processed, though its amount cannot be read: report it failed, then park it", claimed)
	return r.failOrders(out, counted(len(wrongly), "good order was", "good orders were")+" parked in the dead-letter topic: park only what cannot be processed", wrongly)
}

// counted is "1 order was" for one, "3 orders were" for more.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// were is the verb for n things: "was" for one, "were" for more.
func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
