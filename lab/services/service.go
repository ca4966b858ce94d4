package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// State is a service's life: up, crashed (a crash point fired; Restart
// brings it back), stopped (closed for good).
type State string

// Service states, as the lab's state(X) reports them.
const (
	StateUp      State = "up"
	StateCrashed State = "crashed"
	StateStopped State = "stopped"
)

// Table names one table of a service and the database that holds it.
type Table struct {
	Name string
	DB   string
}

// Service is what every service offers the lab: its life cycle and its
// tables, for the screens, `sql SERVICE "SELECT …"` and rows(…) conditions.
// Reads through Query, Count and Rows use a read-only connection and are not
// reported as events: they are the learner's, not the service's.
type Service interface {
	Name() string
	State() State
	// Arm arms a crash point; it fires once.
	Arm(point string) error
	// CrashPoints lists the points Arm accepts in this service's mode.
	CrashPoints() []string
	// Restart brings a crashed service back with its database as it was.
	Restart() error
	Tables() []Table
	// Databases lists the service's database names; the first is its own.
	Databases() []string
	Rows(ctx context.Context, table string, limit int) (Result, error)
	Query(ctx context.Context, sql string) (Result, error)
	QueryDB(ctx context.Context, db, sql string) (Result, error)
	Count(ctx context.Context, table, where string) (int64, error)
	WriteStats() []WriteStats
	Close() error
}

// base carries what all services share: name, env, state, crash points and
// databases.
type base struct {
	name   string
	env    Env
	points []string
	dbs    []*database

	mu    sync.Mutex
	state State
	armed map[string]bool
}

func newBase(name string, env Env, points []string) *base {
	return &base{name: name, env: env.withDefaults(), points: points, state: StateUp, armed: map[string]bool{}}
}

func (b *base) Name() string { return b.name }

func (b *base) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

func (b *base) CrashPoints() []string { return slices.Clone(b.points) }

func (b *base) Arm(point string) error {
	if !slices.Contains(b.points, point) {
		if len(b.points) == 0 {
			return fmt.Errorf("%s: no crash points in this mode", b.name)
		}
		return fmt.Errorf("%s: unknown crash point %q (want %s)", b.name, point, strings.Join(b.points, ", "))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed[point] = true
	return nil
}

func (b *base) armAll(points []string) error {
	for _, p := range points {
		if err := b.Arm(p); err != nil {
			return err
		}
	}
	return nil
}

func (b *base) Restart() error {
	b.mu.Lock()
	switch b.state {
	case StateStopped:
		b.mu.Unlock()
		return fmt.Errorf("%s: %w: it was closed", b.name, ErrNotRunning)
	case StateUp:
		b.mu.Unlock()
		return nil
	}
	b.state = StateUp
	b.mu.Unlock()
	b.emit(Event{Kind: EventRestarted, Detail: b.name + " restarted; its database is as it was"})
	return nil
}

// up returns ErrNotRunning unless the service is up.
func (b *base) up() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != StateUp {
		return fmt.Errorf("%s is %s: %w", b.name, b.state, ErrNotRunning)
	}
	return nil
}

// crashAt fires point if it is armed: the service becomes crashed and the
// returned error wraps ErrCrashed. Otherwise it returns nil.
func (b *base) crashAt(point, detail string, m Message) error {
	b.mu.Lock()
	if !b.armed[point] || b.state != StateUp {
		b.mu.Unlock()
		return nil
	}
	delete(b.armed, point)
	b.state = StateCrashed
	b.mu.Unlock()
	b.emit(Event{Kind: EventCrashed, MessageID: m.ID, Key: m.Key, Detail: fmt.Sprintf("crash point %s: %s", point, detail)})
	return fmt.Errorf("%s crashed at %s: %w", b.name, point, ErrCrashed)
}

func (b *base) emit(e Event) {
	e.Time = b.env.Clock()
	e.Service = b.name
	b.env.Sink(e)
}

func (b *base) addDB(ctx context.Context, name string, writes float64, tables, schema []string) (*database, error) {
	d, err := openDatabase(ctx, &b.env, b.name, name, writes, tables, schema)
	if err != nil {
		return nil, err
	}
	b.dbs = append(b.dbs, d)
	return d, nil
}

func (b *base) Tables() []Table {
	var ts []Table
	for _, d := range b.dbs {
		for _, t := range d.tables {
			ts = append(ts, Table{Name: t, DB: d.name})
		}
	}
	return ts
}

func (b *base) Databases() []string {
	names := make([]string, len(b.dbs))
	for i, d := range b.dbs {
		names[i] = d.name
	}
	return names
}

func (b *base) tableDB(table string) (*database, error) {
	for _, d := range b.dbs {
		if d.has(table) {
			return d, nil
		}
	}
	var names []string
	for _, t := range b.Tables() {
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("%s has no table %q (it has %s): %w", b.name, table, strings.Join(names, ", "), ErrUnknownTable)
}

func (b *base) Rows(ctx context.Context, table string, limit int) (Result, error) {
	d, err := b.tableDB(table)
	if err != nil {
		return Result{}, err
	}
	return d.Rows(ctx, table, limit)
}

// Query runs a read-only SELECT on the service's own database.
func (b *base) Query(ctx context.Context, q string) (Result, error) {
	return b.QueryDB(ctx, b.dbs[0].name, q)
}

// QueryDB runs a read-only SELECT on one of the service's databases.
func (b *base) QueryDB(ctx context.Context, db, q string) (Result, error) {
	for _, d := range b.dbs {
		if d.name == db {
			res, err := d.Query(ctx, q)
			if err != nil {
				return res, fmt.Errorf("sql %s: %w", db, err)
			}
			return res, nil
		}
	}
	return Result{}, fmt.Errorf("%s has no database %q (it has %s)", b.name, db, strings.Join(b.Databases(), ", "))
}

func (b *base) Count(ctx context.Context, table, where string) (int64, error) {
	d, err := b.tableDB(table)
	if err != nil {
		return 0, err
	}
	return d.Count(ctx, table, where)
}

func (b *base) WriteStats() []WriteStats {
	out := make([]WriteStats, len(b.dbs))
	for i, d := range b.dbs {
		out[i] = d.writeStats()
	}
	return out
}

// Close stops the service for good and drops its databases.
func (b *base) Close() error {
	b.mu.Lock()
	if b.state == StateStopped {
		b.mu.Unlock()
		return nil
	}
	b.state = StateStopped
	b.mu.Unlock()
	var errs []error
	for _, d := range b.dbs {
		errs = append(errs, d.close())
	}
	return errors.Join(errs...)
}
