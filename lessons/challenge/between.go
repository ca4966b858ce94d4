package challenge

// The between-writes fault: the lab watches the program's database and
// kills the run right after the first commit that names an order the
// database did not name before. An order whose effect is one transaction
// is whole by then; one made of two writes, each committed alone, has
// only the first, and the kill leaves it half made.
//
// The kill does not race the program: the lab stops the run's process
// group (SIGSTOP) as soon as it sees such a commit, then looks again, and
// kills it only if nothing more was committed meanwhile; after the kill it
// looks once more before it records that the kill landed there. A run that
// got its next write in first is let go on (SIGCONT), and the lab waits
// for the next new order. Seeing the first commit does take a poll
// (betweenPoll): a program whose second write follows its first within
// about that long may get it in before the stop, and is then killed with
// the order whole. That is why effect-once draws the fault three times.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// betweenPoll is how often the watcher asks the database whether anything
// was committed: well inside the work (workMS) a program does between two
// writes.
const betweenPoll = time.Millisecond

// betweenKill is a kill that landed right after an order's first commit:
// what the database named it in then, and when.
type betweenKill struct {
	Key    string
	Run    int
	Tables []string // the tables that named the order at the kill
	At     time.Duration
}

// dbWatch watches the program's database for the between-writes fault,
// for one run.
type dbWatch struct {
	run    *instance
	conn   *sql.Conn
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
	caught chan dbCatch // at most one, then the watch ends
}

// dbCatch is a run stopped right after a commit that named orders the
// database had not named before.
type dbCatch struct {
	run     *instance
	keys    []string            // the orders named first, in the workload's order
	tables  map[string][]string // every order named then → its tables
	version int64               // the database's data_version then
}

// watchDB starts watching the database for run's first commit that names
// a new order. The orders named when it starts are not new.
func (r *runner) watchDB(ctx context.Context, run *instance) (*dbWatch, error) {
	db, err := sql.Open("sqlite", "file:"+r.db+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	conn, err := db.Conn(ctx)
	if err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	w := &dbWatch{run: run, conn: conn, db: db, cancel: cancel, done: make(chan struct{}), caught: make(chan dbCatch, 1)}
	keys := map[string]bool{}
	for _, k := range r.rec.Keys {
		keys[k] = true
	}
	version, known, err := namedOrders(ctx, conn, keys)
	if err != nil {
		cancel()
		conn.Close()
		db.Close()
		return nil, err
	}
	go w.watch(ctx, keys, version, known, r.rec.Keys)
	return w, nil
}

// watch polls the database until a commit names a new order, stops the
// run there and hands it over.
func (w *dbWatch) watch(ctx context.Context, keys map[string]bool, version int64, known map[string][]string, order []string) {
	defer close(w.done)
	tick := time.NewTicker(betweenPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v, err := dataVersion(ctx, w.conn)
		if err != nil || v == version {
			continue
		}
		v, named, err := namedOrders(ctx, w.conn, keys)
		if err != nil {
			continue
		}
		version = v
		var fresh []string
		for _, k := range order {
			if _, ok := known[k]; !ok && named[k] != nil && !slices.Contains(fresh, k) {
				fresh = append(fresh, k)
			}
		}
		known = named
		if len(fresh) == 0 {
			continue
		}
		if w.run.p.Pause() != nil {
			return // ended meanwhile
		}
		if now, err := dataVersion(ctx, w.conn); err != nil || now != v {
			// It committed more before it stopped: too late for this
			// order; the next one will do.
			w.run.p.Resume() //nolint:errcheck // a run that ended needs nothing
			continue
		}
		w.caught <- dbCatch{run: w.run, keys: fresh, tables: named, version: v}
		return
	}
}

// unchangedSince says whether nothing was committed to the database since
// version.
func (w *dbWatch) unchangedSince(version int64) bool {
	v, err := dataVersion(context.Background(), w.conn)
	return err == nil && v == version
}

// close ends the watch and its connection. A run it stopped that no one
// took from it goes on.
func (w *dbWatch) close() {
	w.cancel()
	<-w.done
	select {
	case c := <-w.caught:
		c.run.p.Resume() //nolint:errcheck // a run that ended needs nothing
	default:
	}
	w.conn.Close()
	w.db.Close()
}

// dataVersion is SQLite's count of the commits other connections made to
// the database, as this connection has seen them.
func dataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, err
}

// namedOrders reads, in one read transaction, every table of the
// database but the lab's own and says which of keys each row names (a
// value equal to the key), and the database's data_version then.
func namedOrders(ctx context.Context, q *sql.Conn, keys map[string]bool) (int64, map[string][]string, error) {
	if _, err := q.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, nil, err
	}
	defer q.ExecContext(context.WithoutCancel(ctx), "COMMIT") //nolint:errcheck // a read transaction
	var version int64
	rows, err := q.QueryContext(ctx, "PRAGMA data_version")
	if err != nil {
		return 0, nil, err
	}
	for rows.Next() {
		err = rows.Scan(&version)
	}
	rows.Close()
	if err != nil {
		return 0, nil, err
	}
	var tables []string
	rows, err = q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name NOT LIKE 'mqlab\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return 0, nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return 0, nil, err
		}
		tables = append(tables, name)
	}
	rows.Close()
	named := map[string][]string{}
	for _, table := range tables {
		if err := eachNamed(ctx, q, table, keys, func(key string) {
			if !slices.Contains(named[key], table) {
				named[key] = append(named[key], table)
			}
		}); err != nil {
			return 0, nil, err
		}
	}
	return version, named, nil
}

// eachNamed calls fn with each of keys a row of table names.
func eachNamed(ctx context.Context, q *sql.Conn, table string, keys map[string]bool, fn func(key string)) error {
	rows, err := q.QueryContext(ctx, `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`)
	if err != nil {
		return fmt.Errorf("reading %s: %w", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals {
			var s string
			switch v := v.(type) {
			case string:
				s = v
			case []byte:
				s = string(v)
			default:
				continue
			}
			if keys[s] {
				fn(s)
			}
		}
	}
	return rows.Err()
}

// writeLocked says whether a connection of the program's holds the
// write lock of the database at path: a run stopped inside a write
// transaction keeps every other run from writing until it goes on.
func writeLocked(ctx context.Context, path string) (bool, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		return false, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
			return true, nil
		}
		return false, err
	}
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return false, err
}
