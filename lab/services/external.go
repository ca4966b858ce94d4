package services

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"
)

// External is a window on a SQLite file that a program outside the lab
// writes, such as a challenge's database: the lab reads its tables, for
// the screens and rows(…), and never writes them. It has no crash points.
type External struct {
	name string
	db   *database

	mu     sync.Mutex
	closed bool
}

// OpenExternal opens the SQLite file at path read-only, as the service
// name; its tables are whatever the file holds when they are asked for.
func OpenExternal(ctx context.Context, name, path string) (*External, error) {
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := ro.PingContext(ctx); err != nil {
		ro.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	e := &External{name: name, db: &database{service: name, name: name, ro: ro}}
	e.db.tables = e.tableNames(ctx)
	return e, nil
}

// tableNames lists the file's own tables, in the order they were made.
func (e *External) tableNames(ctx context.Context) []string {
	res, err := e.db.readQuery(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range res.Rows {
		if s, ok := r[0].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// externalLookup bounds the look at the file's tables a snapshot makes.
const externalLookup = 200 * time.Millisecond

func (e *External) Name() string { return e.name }

func (e *External) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return StateStopped
	}
	return StateUp
}

func (e *External) Arm(point string) error {
	return fmt.Errorf("%s is a program's own database, which the lab only reads: it has no crash points", e.name)
}

func (e *External) CrashPoints() []string { return nil }

func (e *External) Restart() error { return nil }

// Tables lists the file's tables as they are now: the program may have
// made some of its own since it started.
func (e *External) Tables() []Table {
	ctx, cancel := context.WithTimeout(context.Background(), externalLookup)
	defer cancel()
	names := e.tableNames(ctx)
	e.mu.Lock()
	if names != nil {
		e.db.tables = names
	}
	names = e.db.tables
	e.mu.Unlock()
	out := make([]Table, len(names))
	for i, n := range names {
		out[i] = Table{Name: n, DB: e.name}
	}
	return out
}

func (e *External) Databases() []string { return []string{e.name} }

func (e *External) Rows(ctx context.Context, table string, limit int) (Result, error) {
	if err := e.check(table); err != nil {
		return Result{}, err
	}
	return e.db.Rows(ctx, table, limit)
}

func (e *External) Query(ctx context.Context, q string) (Result, error) {
	return e.QueryDB(ctx, e.name, q)
}

func (e *External) QueryDB(ctx context.Context, db, q string) (Result, error) {
	if db != e.name {
		return Result{}, fmt.Errorf("%s has no database %q (it has %s)", e.name, db, e.name)
	}
	res, err := e.db.Query(ctx, q)
	if err != nil {
		return res, fmt.Errorf("sql %s: %w", db, err)
	}
	return res, nil
}

func (e *External) Count(ctx context.Context, table, where string) (int64, error) {
	if err := e.check(table); err != nil {
		return 0, err
	}
	return e.db.Count(ctx, table, where)
}

// check says whether table is one of the file's.
func (e *External) check(table string) error {
	known := e.Tables()
	var names []string
	for _, t := range known {
		if t.Name == table {
			return nil
		}
		names = append(names, t.Name)
	}
	return fmt.Errorf("%s has no table %q; its tables are %s", e.name, table, strings.Join(names, ", "))
}

func (e *External) WriteStats() []WriteStats { return nil }

// Close stops reading the file; the file stays as the program left it.
func (e *External) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	return e.db.ro.Close()
}
