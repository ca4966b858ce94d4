package serviceset

// The services' order and sql commands, and what the services show: the
// values rows(SERVICE.TABLE[, WHERE]) and state(SERVICE), the effects the
// checker reads, and the tables a snapshot carries.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
)

// SnapshotRows is how many of a table's newest rows a snapshot carries.
const SnapshotRows = 20

// snapshotQueryTimeout bounds a snapshot's read of one table, in wall time.
const snapshotQueryTimeout = 2 * time.Second

// order places orders one after another through the orders service and
// says what it did with each: what a placed order ends in is a result, not
// an error.
func (s *Set) order(ctx context.Context, r family.Run, c command.Order) error {
	rs := s.get("orders")
	if rs == nil {
		return fmt.Errorf("order: %s", s.NotRunning("orders"))
	}
	o := rs.svc.(*services.Orders)
	r.Begin(c.String())
	ctx, cancel := family.Bind(ctx, s.w)
	defer cancel()
	var stored, published, failed int
	var firstErr string
	placed := 0
	for i := 0; i < c.Count && ctx.Err() == nil; i++ {
		id := c.ID + int64(i)
		res, err := o.Place(ctx, services.Order{ID: id, UserID: c.User, Amount: c.Amount, Item: c.Item})
		placed++
		if res.Stored && rs.relay != nil {
			rs.relay.poke()
		}
		if res.Stored {
			stored++
		}
		if res.Outcome == services.Acknowledged {
			published++
		}
		if err != nil {
			failed++
			if firstErr == "" {
				firstErr = err.Error()
			}
		}
		if c.Count <= family.ListEach {
			r.Say(timeline.Outcome, "%s", s.describeOrder(o.Mode(), id, res, err))
		}
	}
	if c.Count > family.ListEach {
		text := fmt.Sprintf("%d orders %d–%d: %d stored, %d events published", placed, c.ID, c.ID+int64(placed)-1, stored, published)
		if o.Mode() == services.Outbox {
			text += " (the relay publishes the outbox rows)"
		}
		if failed > 0 {
			text += fmt.Sprintf(", %d failed (the first: %s)", failed, firstErr)
		}
		r.Say(timeline.Outcome, "%s", text)
	}
	return ctx.Err()
}

// describeOrder says what placing one order did, in the words of its mode.
func (s *Set) describeOrder(mode services.OrdersMode, id int64, res services.PlaceResult, err error) string {
	msg := res.MessageID
	at := ""
	if topic, partition, offset, ok := s.lab.Published("orders", msg); ok {
		at = fmt.Sprintf(" to %s/%d at offset %d", topic, partition, offset)
	}
	switch {
	case errors.Is(err, services.ErrNotRunning):
		return fmt.Sprintf("order %d not placed: %v (service restart orders brings it back)", id, err)
	case errors.Is(err, services.ErrCrashed) && res.Stored && mode == services.CommitThenPublish:
		return fmt.Sprintf("order %d committed, then orders crashed before publishing: %s was never sent, and nothing remembers it is owed", id, msg)
	case errors.Is(err, services.ErrCrashed) && res.Stored:
		return fmt.Sprintf("order %d and its outbox row committed together, then orders crashed; the row stays pending until the relay runs again (service restart orders)", id)
	case errors.Is(err, services.ErrCrashed):
		return fmt.Sprintf("%s published%s, then orders crashed before storing order %d: the world was told of an order that does not exist", msg, at, id)
	case err != nil && res.Stored:
		why := strings.TrimPrefix(err.Error(), fmt.Sprintf("order %d stored, its event not published: ", id))
		return fmt.Sprintf("order %d committed, but its event %s was not published (%s): nobody will hear of it", id, msg, why)
	case err != nil && res.Outcome == services.Acknowledged:
		return fmt.Sprintf("%s published%s, but order %d was never stored (%v): the world was told of an order that does not exist", msg, at, id, err)
	case err != nil:
		return fmt.Sprintf("order %d not placed: %v", id, err)
	case mode == services.Outbox:
		return fmt.Sprintf("order %d committed with its outbox row (pending); the relay publishes %s", id, msg)
	case mode == services.PublishThenCommit:
		return fmt.Sprintf("%s published%s, then order %d committed", msg, at, id)
	}
	return fmt.Sprintf("order %d committed, then %s published%s", id, msg, at)
}

// sql runs a learner's read-only query on a service's database. With two
// databases (the wallet's dedupe-elsewhere), a table the first does not
// have is looked for in the second.
func (s *Set) sql(ctx context.Context, r family.Run, c command.SQL) error {
	rs := s.get(c.Service)
	if rs == nil {
		return fmt.Errorf("sql %s: %s", c.Service, s.NotRunning(c.Service))
	}
	ctx, cancel := family.Bind(ctx, s.w)
	defer cancel()
	var res services.Result
	var err error
	db := ""
	for _, name := range rs.svc.Databases() {
		var e error
		res, e = rs.svc.QueryDB(ctx, name, c.Query)
		if e == nil {
			db, err = name, nil
			break
		}
		if err == nil {
			err = e
		}
		if !errors.Is(e, services.ErrUnknownTable) {
			break
		}
	}
	if db == "" {
		if errors.Is(err, services.ErrUnknownTable) {
			return fmt.Errorf("%w; the tables of %s are %s", err, c.Service, tableNames(rs.svc))
		}
		return err
	}
	r.Begin(c.String())
	if db != c.Service {
		r.Say(timeline.Outcome, "(from %s, the service's second database)", db)
	}
	for _, line := range strings.Split(strings.TrimRight(res.String(), "\n"), "\n") {
		r.Say(timeline.Outcome, "%s", line)
	}
	return nil
}

func tableNames(svc services.Service) string {
	var names []string
	for _, t := range svc.Tables() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// --- values and the checker

// Value reads rows(SERVICE.TABLE[, WHERE]) and state(SERVICE).
func (s *Set) Value(ctx context.Context, v command.Value) (any, bool, error) {
	switch v.Func {
	case "rows":
		rs := s.get(v.Service)
		if rs == nil {
			// Not yet: a learner or a lesson may be about to start it.
			return nil, true, family.NotNow(fmt.Errorf("%s: %s", v, s.NotRunning(v.Service)))
		}
		n, err := rs.svc.Count(ctx, v.Table, v.Where)
		if err != nil {
			if strings.HasPrefix(err.Error(), "rows(") {
				return nil, true, err
			}
			return nil, true, fmt.Errorf("%s: %w", v, err)
		}
		return float64(n), true, nil
	case "state":
		if rs := s.get(v.Arg); rs != nil {
			return string(rs.svc.State()), true, nil
		}
		s.mu.Lock()
		stopped := s.stopped[v.Arg]
		s.mu.Unlock()
		// A service never started is not running either; a client that
		// happens to share the name keeps its own state.
		if stopped || slices.Contains(command.Services, v.Arg) && !s.lab.HasClient(v.Arg) {
			return string(services.StateStopped), true, nil
		}
	}
	return nil, false, nil
}

// observe hands the checker the services' side effects, each with the
// message that caused it.
func (s *Set) Observe(_ context.Context, h *checker.History, _ *checker.Observed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Effects = append(h.Effects, s.effects...)
	return nil
}

// States copies the services for a snapshot: each table's newest rows and
// count, read on the services' read-only connections.
func (s *Set) States() []ServiceState {
	s.mu.Lock()
	var names []string
	for n := range s.running {
		names = append(names, n)
	}
	for n := range s.stopped {
		names = append(names, n)
	}
	running := make(map[string]*runningService, len(s.running))
	for n, rs := range s.running {
		running[n] = rs
	}
	s.mu.Unlock()
	slices.Sort(names)
	var out []ServiceState
	for _, name := range names {
		rs := running[name]
		if rs == nil {
			out = append(out, ServiceState{Name: name, State: string(services.StateStopped)})
			continue
		}
		st := ServiceState{Name: name, State: string(rs.svc.State()), Started: rs.cmd.String(), Mode: rs.mode, Writes: rs.svc.WriteStats()}
		if rs.started != "" {
			st.Started = rs.started
		}
		if co, ok := rs.svc.(*services.Checkout); ok {
			stats := co.Stats()
			st.Checkout = &stats
		}
		for _, t := range rs.svc.Tables() {
			st.Tables = append(st.Tables, tableState(s.w.Context(), rs.svc, name, t))
		}
		out = append(out, st)
	}
	return out
}

func tableState(ctx context.Context, svc services.Service, service string, t services.Table) TableState {
	ts := TableState{Name: service + "." + t.Name, DB: t.DB, Columns: []string{}, Rows: [][]string{}}
	ctx, cancel := context.WithTimeout(ctx, snapshotQueryTimeout)
	defer cancel()
	n, err := svc.Count(ctx, t.Name, "")
	if err == nil {
		var res services.Result
		res, err = svc.Rows(ctx, t.Name, SnapshotRows)
		ts.Total, ts.Columns, ts.Rows = n, res.Columns, res.Strings()
	}
	if err != nil {
		ts.Error = err.Error()
	}
	return ts
}
