package services

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Registry holds the lab's running services by name and answers the
// lab's read-only questions about their tables: `sql SERVICE "SELECT …"`
// and rows(SERVICE.TABLE, WHERE).
type Registry struct {
	mu       sync.Mutex
	services map[string]Service
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{services: map[string]Service{}} }

// Add registers s under its name, replacing (and closing) any service of
// that name.
func (r *Registry) Add(s Service) error {
	r.mu.Lock()
	old := r.services[s.Name()]
	r.services[s.Name()] = s
	r.mu.Unlock()
	if old != nil && old != s {
		return old.Close()
	}
	return nil
}

// Remove closes and forgets the named service.
func (r *Registry) Remove(name string) error {
	r.mu.Lock()
	s := r.services[name]
	delete(r.services, name)
	r.mu.Unlock()
	if s == nil {
		return fmt.Errorf("no service %q", name)
	}
	return s.Close()
}

// Get returns the named service.
func (r *Registry) Get(name string) (Service, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.services[name]
	return s, ok
}

// Names lists the registered services in order.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.services))
}

// lookup finds the service that owns the database called name (a service's
// own name, or a second database such as "wallet-dedupe").
func (r *Registry) lookup(name string) (Service, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.services[name]; ok {
		return s, nil
	}
	for _, s := range r.services {
		if slices.Contains(s.Databases(), name) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no service %q (running: %s)", name, strings.Join(slices.Sorted(maps.Keys(r.services)), ", "))
}

// Query runs one read-only SELECT on a service's database (a service name,
// or one of its databases' names).
func (r *Registry) Query(ctx context.Context, name, sql string) (Result, error) {
	s, err := r.lookup(name)
	if err != nil {
		return Result{}, err
	}
	db := name
	if db == s.Name() {
		db = s.Databases()[0]
	}
	return s.QueryDB(ctx, db, sql)
}

// Count counts rows of "SERVICE.TABLE" matching where (all rows when where
// is empty), as rows(orders.outbox, status='pending') asks. The WHERE clause
// runs on the read-only connection.
func (r *Registry) Count(ctx context.Context, table, where string) (int64, error) {
	svc, tbl, ok := strings.Cut(table, ".")
	if !ok || svc == "" || tbl == "" {
		return 0, fmt.Errorf("rows(%s): want SERVICE.TABLE, such as orders.outbox", table)
	}
	s, err := r.lookup(svc)
	if err != nil {
		return 0, err
	}
	return s.Count(ctx, tbl, where)
}

// Close closes every service.
func (r *Registry) Close() error {
	r.mu.Lock()
	all := r.services
	r.services = map[string]Service{}
	r.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// The services and what they promise the lab.
var (
	_ Service = (*Orders)(nil)
	_ Service = (*Payments)(nil)
	_ Service = (*Wallet)(nil)
	_ Service = (*Checkout)(nil)
	_ Handler = (*Wallet)(nil)
	_ Handler = (*Payments)(nil)
	_ Charger = (*Payments)(nil)
)
