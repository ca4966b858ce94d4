package services

import (
	"context"
	"errors"
	"testing"
)

func newPayments(t *testing.T, env *testEnv, cfg PaymentsConfig) *Payments {
	t.Helper()
	p, err := NewPayments(context.Background(), cfg, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, p)
	return p
}

func charged(t *testing.T, p *Payments) (int64, int64) {
	t.Helper()
	n, total, err := p.Charged(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n, total
}

func TestPaymentsChargesOrder881Once(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	p := newPayments(t, env, PaymentsConfig{})
	req := ChargeRequest{Key: "881", OrderID: 881, UserID: 42, Amount: 450}
	first, err := p.Charge(ctx, req)
	if err != nil || first.Repeat {
		t.Fatalf("first charge = %+v, %v", first, err)
	}
	second, err := p.Charge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Repeat || second.ChargeID != first.ChargeID || second.Amount != 450 {
		t.Errorf("second charge = %+v, want the original %+v marked repeat", second, first)
	}
	if n, total := charged(t, p); n != 1 || total != 450 {
		t.Errorf("charged %d times, ₹%d; want once, ₹450", n, total)
	}
	if n := count(t, p, "charges", "idempotency_key = '881' AND repeats = 1"); n != 1 {
		t.Errorf("the charge row should count the repeat")
	}
	if len(env.rec.kind(EventEffect)) != 1 || len(env.rec.kind(EventDuplicate)) != 1 {
		t.Errorf("want one effect and one duplicate event")
	}

	// The same key for another amount is refused.
	_, err = p.Charge(ctx, ChargeRequest{Key: "881", OrderID: 881, UserID: 42, Amount: 900})
	if !errors.Is(err, ErrKeyReused) {
		t.Errorf("reused key = %v, want ErrKeyReused", err)
	}
	if _, total := charged(t, p); total != 450 {
		t.Errorf("total ₹%d after refusal", total)
	}
}

func TestPaymentsWorkerCrashAfterChargeThenRetry(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	p := newPayments(t, env, PaymentsConfig{Crash: []string{"after-charge"}})
	m := Message{ID: "msg-881", Key: "881", Value: `{"event":"order_placed","order_id":881,"user_id":42,"amount":450}`}
	if err := p.Handle(ctx, m); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Handle = %v, want ErrCrashed", err)
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := p.Handle(ctx, m); err != nil {
		t.Fatal(err)
	}
	if n, total := charged(t, p); n != 1 || total != 450 {
		t.Errorf("charged %d times, ₹%d; want once, ₹450", n, total)
	}
}

func TestPaymentsKeyPerAttemptChargesTwice(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		from KeyFrom
		want int64
	}{{KeyFromOrder, 1}, {KeyFromMessage, 1}, {KeyFromAttempt, 2}} {
		env := newTestEnv()
		p := newPayments(t, env, PaymentsConfig{KeyFrom: tc.from})
		m := Message{ID: "msg-881", Key: "881"}
		for range 2 {
			if err := p.Handle(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := charged(t, p); n != tc.want {
			t.Errorf("key from %s: %d charges, want %d", tc.from, n, tc.want)
		}
	}
}
