package services

import (
	"context"
	"testing"
)

// The statements a delivery runs carry the message as their cause when
// the caller names it; the ones that set the service up carry none.
func TestSQLEventsCarryTheirCause(t *testing.T) {
	env := newTestEnv()
	w := newWallet(t, env, StrategyDedupeTable)
	setup := len(env.rec.kind(EventSQL))
	if setup == 0 {
		t.Fatal("no SQL while the wallet set up its tables")
	}
	m := cashbackMessage(StrategyDedupeTable)
	if err := w.Handle(WithMessage(context.Background(), m.ID), m); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(context.Background(), Message{ID: "msg-882", Key: "882", Value: "user=42"}); err != nil {
		t.Fatal(err)
	}
	sql := env.rec.kind(EventSQL)
	for _, e := range sql[:setup] {
		if e.Cause != "" {
			t.Errorf("set-up statement %q has cause %q", e.SQL, e.Cause)
		}
	}
	caused, uncaused := 0, 0
	for _, e := range sql[setup:] {
		switch e.Cause {
		case m.ID:
			caused++
		case "":
			uncaused++
		default:
			t.Errorf("%q has cause %q", e.SQL, e.Cause)
		}
	}
	// BEGIN, the processed_messages INSERT, the UPDATE and COMMIT, each time.
	if caused != 4 || uncaused != 4 {
		t.Errorf("%d statements name msg-881 and %d name nothing; want 4 and 4:\n%v", caused, uncaused, env.rec.sql())
	}
}
