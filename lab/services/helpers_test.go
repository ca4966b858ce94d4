package services

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a lab clock for single-goroutine tests: Sleep moves time on
// at once.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	return nil
}

// recorder keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) sink(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kind(k EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// sql returns every SQL statement as run, arguments inlined.
func (r *recorder) sql() []string {
	var out []string
	for _, e := range r.kind(EventSQL) {
		out = append(out, e.InlineSQL())
	}
	return out
}

func (r *recorder) hasSQL(t *testing.T, prefix string) {
	t.Helper()
	for _, s := range r.sql() {
		if strings.HasPrefix(s, prefix) {
			return
		}
	}
	t.Errorf("no SQL event starting %q; got:\n%s", prefix, strings.Join(r.sql(), "\n"))
}

// fakePublisher stands for the broker: it records what it was given and
// answers with the next scripted outcome (Acknowledged once the script runs
// out).
type fakePublisher struct {
	mu        sync.Mutex
	outcomes  []Outcome
	delivered []Message // acknowledged messages, in order: what a consumer would see
	attempts  int
	dests     map[string]int
}

func (p *fakePublisher) Publish(ctx context.Context, dest string, m Message) (Outcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts++
	out := Acknowledged
	if len(p.outcomes) > 0 {
		out, p.outcomes = p.outcomes[0], p.outcomes[1:]
	}
	if out != Acknowledged {
		return out, errors.New("broker says " + out.String())
	}
	if p.dests == nil {
		p.dests = map[string]int{}
	}
	p.dests[dest]++
	p.delivered = append(p.delivered, m)
	return out, nil
}

func (p *fakePublisher) messages() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Message(nil), p.delivered...)
}

// testEnv is an Env on a fake clock with a recorder and a fake publisher.
type testEnv struct {
	Env
	clock *fakeClock
	rec   *recorder
	pub   *fakePublisher
}

func newTestEnv() *testEnv {
	c := newFakeClock()
	rec := &recorder{}
	pub := &fakePublisher{}
	return &testEnv{Env: Env{Publisher: pub, Clock: c.Now, Sleeper: c, Sink: rec.sink}, clock: c, rec: rec, pub: pub}
}

func count(t *testing.T, s Service, table, where string) int64 {
	t.Helper()
	n, err := s.Count(context.Background(), table, where)
	if err != nil {
		t.Fatalf("count %s where %s: %v", table, where, err)
	}
	return n
}

func closeOnCleanup(t *testing.T, s Service) {
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s: %v", s.Name(), err)
		}
	})
}
