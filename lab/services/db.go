package services

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// timeLayout is how services store lab times: sortable, and understood by
// SQLite's date functions.
const timeLayout = "2006-01-02 15:04:05.000"

var dbSeq atomic.Int64

// database is one SQLite database of a service: a read-write pool of one
// connection that the service's statements go through (each one reported as
// an event), and a separate read-only connection (opened with mode=ro and
// query_only) for the learner's queries and the screens.
type database struct {
	service string
	name    string
	tables  []string
	rw      *sql.DB
	ro      *sql.DB
	ceiling *bucket
	env     *Env
}

// openDatabase creates a fresh in-memory database. The memdb VFS with a name
// starting with "/" lets several connections share one in-memory database
// with real locking, so the read-only connection sees exactly what was
// committed. Each instance gets a unique name: tests and labs never collide.
func openDatabase(ctx context.Context, env *Env, service, name string, writes float64, tables []string, schema []string) (*database, error) {
	path := fmt.Sprintf("/mqlab-%s-%d", name, dbSeq.Add(1))
	rw, err := sql.Open("sqlite", "file:"+path+"?vfs=memdb&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	// One connection: the service's statements run one at a time, in the
	// order the events show, and the in-memory database lives as long as it.
	rw.SetMaxOpenConns(1)
	rw.SetMaxIdleConns(1)
	rw.SetConnMaxLifetime(0)
	rw.SetConnMaxIdleTime(0)
	d := &database{service: service, name: name, tables: tables, rw: rw, env: env,
		ceiling: newBucket(writes, env.Clock, env.Sleeper)}
	for _, stmt := range schema {
		if _, err := d.exec(ctx, rw, stmt); err != nil {
			rw.Close()
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
	}
	ro, err := sql.Open("sqlite", "file:"+path+"?vfs=memdb&mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		rw.Close()
		return nil, fmt.Errorf("open %s read-only: %w", name, err)
	}
	ro.SetMaxOpenConns(1)
	ro.SetMaxIdleConns(1)
	ro.SetConnMaxLifetime(0)
	ro.SetConnMaxIdleTime(0)
	if err := ro.PingContext(ctx); err != nil {
		rw.Close()
		ro.Close()
		return nil, fmt.Errorf("open %s read-only: %w", name, err)
	}
	d.ro = ro
	return d, nil
}

func (d *database) close() error {
	return errors.Join(d.ro.Close(), d.rw.Close())
}

func (d *database) has(table string) bool {
	for _, t := range d.tables {
		if t == table {
			return true
		}
	}
	return false
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (d *database) event(ctx context.Context, e Event) {
	e.Cause = messageOf(ctx)
	e.Args = plainArgs(e.Args)
	e.Time = d.env.Clock()
	e.Service = d.service
	e.DB = d.name
	d.env.Sink(e)
}

// plainArgs turns driver values (sql.NullString …) into plain ones, so an
// event serialises as what SQLite received.
func plainArgs(args []any) []any {
	if len(args) == 0 {
		return nil
	}
	out := make([]any, len(args))
	for i, a := range args {
		if v, ok := a.(driver.Valuer); ok {
			if dv, err := v.Value(); err == nil {
				a = dv
			}
		}
		out[i] = a
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// exec runs one statement and reports it.
func (d *database) exec(ctx context.Context, x execer, query string, args ...any) (int64, error) {
	res, err := x.ExecContext(ctx, query, args...)
	n := int64(-1)
	if err == nil {
		if a, aerr := res.RowsAffected(); aerr == nil {
			n = a
		}
	}
	d.event(ctx, Event{Kind: EventSQL, SQL: query, Args: args, RowsAffected: n, Err: errText(err)})
	return n, err
}

// query runs one SELECT, hands each row to scan, and reports it with the
// number of rows it returned.
func (d *database) query(ctx context.Context, x execer, scan func(*sql.Rows) error, query string, args ...any) (int, error) {
	n := 0
	err := func() error {
		rows, err := x.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			n++
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}()
	d.event(ctx, Event{Kind: EventSQL, SQL: query, Args: args, RowsAffected: -1, Rows: n, Err: errText(err)})
	return n, err
}

// writeOne runs one write statement in its own (implicit) transaction, after
// taking a token from the write ceiling.
func (d *database) writeOne(ctx context.Context, query string, args ...any) (int64, error) {
	if err := d.ceiling.wait(ctx); err != nil {
		return -1, err
	}
	return d.exec(ctx, d.rw, query, args...)
}

// write runs fn in one transaction (one token of the write ceiling). An
// error from fn rolls back; a crash rolls back too, as the dropped
// connection of a dead process would.
func (d *database) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := d.ceiling.wait(ctx); err != nil {
		return err
	}
	tx, err := d.rw.BeginTx(ctx, nil)
	d.event(ctx, Event{Kind: EventSQL, SQL: "BEGIN", RowsAffected: -1, Err: errText(err)})
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		rerr := tx.Rollback()
		detail := ""
		if errors.Is(err, ErrCrashed) {
			detail = "the process died: its connection closed and SQLite rolled the transaction back"
		}
		d.event(ctx, Event{Kind: EventSQL, SQL: "ROLLBACK", RowsAffected: -1, Detail: detail, Err: errText(rerr)})
		return err
	}
	err = tx.Commit()
	d.event(ctx, Event{Kind: EventSQL, SQL: "COMMIT", RowsAffected: -1, Err: errText(err)})
	return err
}

func (d *database) writeStats() WriteStats {
	s := d.ceiling.stats()
	s.DB = d.name
	return s
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// isDuplicateKey reports a PRIMARY KEY or UNIQUE violation.
func isDuplicateKey(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

func labTime(t time.Time) string { return t.UTC().Format(timeLayout) }
