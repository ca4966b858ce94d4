package services

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// place places an order for each id, as the checkout would.
func place(t *testing.T, ctx context.Context, s *Orders, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Place(ctx, Order{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
}

func newOrders(t *testing.T, env *testEnv, mode OrdersMode, crash ...string) *Orders {
	t.Helper()
	s, err := NewOrders(context.Background(), OrdersConfig{Mode: mode, Crash: crash}, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, s)
	return s
}

func TestCommitThenPublishLosesTheEventOnACrash(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	s := newOrders(t, env, CommitThenPublish, "after-commit")

	_, err := s.Place(ctx, Order{ID: 881})
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("Place = %v, want ErrCrashed", err)
	}
	if s.State() != StateCrashed {
		t.Fatalf("state %s, want crashed", s.State())
	}
	if _, err := s.Place(ctx, Order{ID: 882}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Place while crashed = %v, want ErrNotRunning", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// The order is in the database; nobody was ever told.
	if n := count(t, s, "orders", "id = 881"); n != 1 {
		t.Errorf("orders 881 = %d rows, want 1", n)
	}
	if got := env.pub.messages(); len(got) != 0 {
		t.Errorf("published %v, want nothing: the event is lost", got)
	}
	env.rec.hasSQL(t, "INSERT INTO orders (id, user_id, item, amount, status, created_at) VALUES (881, 42, 'phone', 450, 'placed', ")
	if len(env.rec.kind(EventCrashed)) != 1 {
		t.Errorf("want one crashed event")
	}

	// The crash point fired once: the next order goes through.
	res, err := s.Place(ctx, Order{ID: 883})
	if err != nil || !res.Stored || res.Outcome != Acknowledged {
		t.Fatalf("Place 883 = %+v, %v", res, err)
	}
	if got := env.pub.messages(); len(got) != 1 || got[0].ID != "msg-883" || got[0].Key != "883" {
		t.Errorf("published %+v, want msg-883 only", got)
	}
}

func TestPublishThenCommitAnnouncesAnOrderThatNeverExisted(t *testing.T) {
	ctx := context.Background()

	t.Run("crash after publish", func(t *testing.T) {
		env := newTestEnv()
		s := newOrders(t, env, PublishThenCommit, "after-publish")
		if _, err := s.Place(ctx, Order{ID: 881}); !errors.Is(err, ErrCrashed) {
			t.Fatalf("Place = %v, want ErrCrashed", err)
		}
		if got := env.pub.messages(); len(got) != 1 || got[0].ID != "msg-881" {
			t.Fatalf("published %+v, want msg-881", got)
		}
		if n := count(t, s, "orders", ""); n != 0 {
			t.Errorf("orders has %d rows, want 0: the order never existed", n)
		}
	})

	t.Run("failed commit", func(t *testing.T) {
		env := newTestEnv()
		s := newOrders(t, env, PublishThenCommit)
		// User 5000 is no customer: the deferred foreign key fails at COMMIT,
		// after the event went out.
		_, err := s.Place(ctx, Order{ID: 881, UserID: 5000})
		if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Fatalf("Place = %v, want a FOREIGN KEY failure", err)
		}
		if got := env.pub.messages(); len(got) != 1 {
			t.Fatalf("published %d messages, want 1", len(got))
		}
		if n := count(t, s, "orders", ""); n != 0 {
			t.Errorf("orders has %d rows, want 0", n)
		}
		if len(env.rec.kind(EventOrderFailed)) != 1 {
			t.Errorf("want an order-failed event")
		}
		var commit Event
		for _, e := range env.rec.kind(EventSQL) {
			if e.SQL == "COMMIT" {
				commit = e
			}
		}
		if !strings.Contains(commit.Err, "FOREIGN KEY") {
			t.Errorf("COMMIT event = %+v, want its FOREIGN KEY error", commit)
		}
	})

	t.Run("the other modes publish nothing for it", func(t *testing.T) {
		for _, mode := range []OrdersMode{CommitThenPublish, Outbox} {
			env := newTestEnv()
			s := newOrders(t, env, mode)
			if _, err := s.Place(ctx, Order{ID: 881, UserID: 5000}); err == nil {
				t.Fatalf("%s: Place succeeded for an unknown customer", mode)
			}
			if mode == Outbox {
				if _, err := s.RelayOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := env.pub.messages(); len(got) != 0 {
				t.Errorf("%s: published %+v", mode, got)
			}
		}
	})
}

func TestOutboxNeverLosesAndRepublishesAfterARelayCrash(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	s := newOrders(t, env, Outbox, "after-commit", "before-mark")

	// The service dies right after its transaction: nothing is lost.
	if _, err := s.Place(ctx, Order{ID: 881}); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Place = %v, want ErrCrashed", err)
	}
	if n := count(t, s, "outbox", "status='pending'"); n != 1 {
		t.Fatalf("pending outbox rows = %d, want 1", n)
	}
	if _, err := s.RelayOnce(ctx); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("RelayOnce while crashed = %v", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}

	// The relay publishes and dies before marking the row sent.
	if _, err := s.RelayOnce(ctx); !errors.Is(err, ErrCrashed) {
		t.Fatalf("RelayOnce = %v, want ErrCrashed", err)
	}
	if n := count(t, s, "outbox", "status='pending'"); n != 1 {
		t.Fatalf("pending after relay crash = %d, want 1", n)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// On restart it publishes the same row again.
	sent, err := s.RelayOnce(ctx)
	if err != nil || sent != 1 {
		t.Fatalf("RelayOnce = %d, %v", sent, err)
	}
	if n := count(t, s, "outbox", "status='pending'"); n != 0 {
		t.Errorf("pending after restart = %d, want 0", n)
	}
	got := env.pub.messages()
	if len(got) != 2 || got[0].ID != "msg-881" || got[1] != got[0] {
		t.Fatalf("published %+v, want msg-881 twice with the same id", got)
	}
	if len(env.rec.kind(EventRepublished)) != 1 {
		t.Errorf("want one republished event")
	}
	if n := count(t, s, "outbox", "attempts = 2 AND status = 'sent'"); n != 1 {
		t.Errorf("outbox row not sent after 2 attempts")
	}

	// The consumer side absorbs the duplicate: a wallet with a dedupe table
	// credits ₹50 once for the two deliveries.
	w, err := NewWallet(ctx, WalletConfig{Strategy: StrategyDedupeTable}, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, w)
	for _, m := range got {
		if err := w.Handle(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := w.Balance(ctx, 42); b != 50 {
		t.Errorf("balance %d, want 50", b)
	}
}

func TestOutboxRelayKeepsARowTheBrokerDidNotAcknowledge(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	s := newOrders(t, env, Outbox)
	place(t, ctx, s, 881, 882)
	env.pub.outcomes = []Outcome{Unknown}
	sent, err := s.RelayOnce(ctx)
	if !errors.Is(err, ErrNotPublished) || sent != 0 {
		t.Fatalf("RelayOnce = %d, %v; want 0 and ErrNotPublished", sent, err)
	}
	if n := count(t, s, "outbox", "status='pending' AND last_error LIKE 'unknown%'"); n != 1 {
		t.Errorf("want 881 pending with its error")
	}
	if sent, err := s.RelayOnce(ctx); err != nil || sent != 2 {
		t.Fatalf("second pass = %d, %v", sent, err)
	}
	got := env.pub.messages()
	if len(got) != 2 || got[0].ID != "msg-881" || got[1].ID != "msg-882" {
		t.Errorf("published %+v, want 881 then 882", got)
	}
}

func TestRunRelayIsOwnedByItsCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		pub := &fakePublisher{}
		rec := &recorder{}
		s, err := NewOrders(ctx, OrdersConfig{Mode: Outbox}, Env{Publisher: pub, Sink: rec.sink})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		done := make(chan error)
		go func() { done <- s.RunRelay(ctx, 100*time.Millisecond) }()
		for id := int64(1); id <= 3; id++ {
			if _, err := s.Place(ctx, Order{ID: id}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second)
		if n := len(pub.messages()); n != 3 {
			t.Errorf("relay published %d, want 3", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunRelay = %v", err)
		}
	})
}

func TestOrdersRejectsUnknownModesAndCrashPoints(t *testing.T) {
	env := newTestEnv()
	if _, err := NewOrders(context.Background(), OrdersConfig{Mode: "outbx"}, env.Env); err == nil || !strings.Contains(err.Error(), "want commit-then-publish") {
		t.Errorf("unknown mode: %v", err)
	}
	_, err := NewOrders(context.Background(), OrdersConfig{Mode: CommitThenPublish, Crash: []string{"before-mark"}}, env.Env)
	if err == nil || !strings.Contains(err.Error(), "want after-commit") {
		t.Errorf("crash point of another mode: %v", err)
	}
}

// The timeline calls a relay's write a republish only when an earlier
// try may have reached the log: after tries the broker refused, the
// first acknowledged write is the row's first copy; after a try with no
// answer, the next one may be its second.
func TestRelayRepublishesOnlyWhatMayHaveGoneOut(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	s := newOrders(t, env, Outbox)
	place(t, ctx, s, 881, 882)
	// 881: refused twice, then written; 882: no answer, then written.
	env.pub.outcomes = []Outcome{Failed, Rejected, Acknowledged, Unknown}
	for pass := 0; pass < 5; pass++ {
		s.RelayOnce(ctx) // the refusals and the unknown end a pass with an error
	}
	if n := count(t, s, "outbox", "status='sent'"); n != 2 {
		t.Fatalf("%d rows sent, want both", n)
	}
	var again []string
	for _, e := range env.rec.kind(EventRepublished) {
		again = append(again, e.MessageID)
	}
	if !slices.Equal(again, []string{"msg-882"}) {
		t.Errorf("republished %v; want only msg-882, whose first try had no answer", again)
	}
	if n := len(env.rec.kind(EventPublished)); n != 1 {
		t.Errorf("%d published events, want 1 (msg-881's first copy)", n)
	}
}
