package serviceset

import (
	"context"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/services"
	"github.com/mqlab/mqlab/lab/timeline"
)

// world is a world without a cluster: the services need only its clock,
// its context and its timeline.
type world struct {
	ctx   context.Context
	clock *clock.Clock
}

func (w world) Cluster() *broker.Cluster         { return nil }
func (w world) Clock() *clock.Clock              { return w.clock }
func (w world) Context() context.Context         { return w.ctx }
func (w world) Add(timeline.Event)               {}
func (w world) AddAlways(timeline.Event)         {}
func (lab) Names(string) (bool, bool)            { return false, true }
func (lab) Detail(services.Event) bool           { return false }
func (lab) HasClient(string) bool                { return false }
func (r *run) Begin(string)                      {}
func (r *run) Say(timeline.Kind, string, ...any) {}

// lab acknowledges every publish.
type lab struct{}

func (lab) Publisher(string) services.Publisher {
	return services.PublisherFunc(func(context.Context, string, services.Message) (services.Outcome, error) {
		return services.Acknowledged, nil
	})
}

func (lab) Published(string, string) (string, int, int64, bool) { return "", 0, 0, false }

type run struct{}

// Close stops what the services run: an outbox's relay is gone once Close
// returns.
func TestCloseStopsTheRelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(world{ctx: ctx, clock: clock.New()}, lab{})
	cmd, err := command.Parse("service start orders mode=outbox")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, &run{}, cmd); err != nil {
		t.Fatal(err)
	}
	rs := s.get("orders")
	if rs == nil || rs.relay == nil {
		t.Fatalf("orders in mode outbox runs %+v; want a relay", rs)
	}
	s.Close()
	select {
	case <-rs.relay.done:
	default:
		t.Error("the relay still runs after Close")
	}
	if s.get("orders") != nil {
		t.Error("orders still runs after Close")
	}
}
