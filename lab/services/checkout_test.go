package services

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// flashSale runs buyers arriving every gap on the bubble's fake clock, each
// on its own goroutine as the lab's load generator would, and waits for
// every answer.
func flashSale(t *testing.T, mode CheckoutMode, buyers int, gap time.Duration) (CheckoutStats, *fakePublisher, *Payments, []CheckoutResult) {
	st, pub, pay, _, results := flashSaleCheckout(t, mode, buyers, gap)
	return st, pub, pay, results
}

func flashSaleCheckout(t *testing.T, mode CheckoutMode, buyers int, gap time.Duration) (CheckoutStats, *fakePublisher, *Payments, *Checkout, []CheckoutResult) {
	t.Helper()
	ctx := context.Background()
	pub := &fakePublisher{}
	env := Env{Publisher: pub} // bubble time: time.Now and WallSleep are fake and instant
	pay, err := NewPayments(ctx, PaymentsConfig{}, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pay.Close() })
	co, err := NewCheckout(ctx, CheckoutConfig{Mode: mode, Threads: 4, Timeout: 5 * time.Second, Receipt: 3 * time.Second}, env, pay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { co.Close() })

	results := make([]CheckoutResult, buyers)
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := co.Buy(ctx, Purchase{OrderID: int64(1000 + i)})
			if res.OK != (err == nil) {
				t.Errorf("buyer %d: OK=%v but err=%v", i, res.OK, err)
			}
			if err != nil && !errors.Is(err, ErrNoThread) && !errors.Is(err, ErrTimeout) {
				t.Errorf("buyer %d: unexpected error %v", i, err)
			}
			results[i] = res
		}()
		time.Sleep(gap)
	}
	wg.Wait()
	return co.Stats(), pub, pay, co, results
}

func TestCheckoutSyncVersusQueuedWithASlowReceiptService(t *testing.T) {
	const buyers, gap = 100, 100 * time.Millisecond // 10 buyers a second for 10 s

	var sync, queued CheckoutStats
	synctest.Test(t, func(t *testing.T) {
		st, pub, pay, co, results := flashSaleCheckout(t, Sync, buyers, gap)
		sync = st
		t.Logf("sync: %+v", st)
		if st.Requests != buyers || st.OK+st.Errors != buyers {
			t.Fatalf("answered %d+%d of %d", st.OK, st.Errors, buyers)
		}
		// Four threads held 3.1 s each serve about 1.3 buyers a second: the
		// rest wait, and the deadline catches them.
		if st.NoThread == 0 {
			t.Errorf("no buyer ran out of request threads")
		}
		if st.ChargedButFailed == 0 {
			t.Errorf("no buyer was charged and then shown an error")
		}
		if st.OK == 0 || st.OK > buyers/4 {
			t.Errorf("%d buyers served, want a few", st.OK)
		}
		if st.OKLatency.Min() < 3100*time.Millisecond {
			t.Errorf("a sync checkout took %s, less than the four calls", st.OKLatency.Min())
		}
		// Every charge the provider holds is a buyer who succeeded or was
		// told it failed after paying.
		n, _, err := pay.Charged(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n != st.OK+st.ChargedButFailed {
			t.Errorf("provider holds %d charges, want OK %d + charged-but-failed %d", n, st.OK, st.ChargedButFailed)
		}
		charged := 0
		for _, r := range results {
			if r.Charged && !r.OK {
				charged++
				if r.Stage != "receipt" && r.Stage != "warehouse" && r.Stage != "payment" {
					t.Errorf("charged buyer failed in %q", r.Stage)
				}
			}
		}
		if int64(charged) != st.ChargedButFailed {
			t.Errorf("results show %d charged-but-failed, stats %d", charged, st.ChargedButFailed)
		}
		if len(pub.messages()) != 0 {
			t.Errorf("sync mode published")
		}
		// The checkouts table tells the same story.
		if n := count(t, co, "checkouts", "status = 'error' AND charged = 1"); n != st.ChargedButFailed {
			t.Errorf("checkouts rows charged and failed = %d, stats %d", n, st.ChargedButFailed)
		}
		if n := count(t, co, "checkouts", "status = 'error' AND stage = 'thread'"); n != st.NoThread {
			t.Errorf("checkouts rows without a thread = %d, stats %d", n, st.NoThread)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		st, pub, pay, _ := flashSale(t, Queued, buyers, gap)
		queued = st
		t.Logf("queued: %+v", st)
		if st.OK != buyers || st.Errors != 0 || st.ChargedButFailed != 0 {
			t.Errorf("queued: OK %d errors %d charged-but-failed %d; want all OK", st.OK, st.Errors, st.ChargedButFailed)
		}
		if st.Latency.Max > 100*time.Millisecond {
			t.Errorf("queued checkout took up to %s, want the fast part only (70 ms)", st.Latency.Max)
		}
		if got := pub.dests["receipts"]; got != buyers {
			t.Errorf("published %d receipts messages, want %d", got, buyers)
		}
		if n, total, _ := pay.Charged(context.Background()); n != buyers || total != buyers*450 {
			t.Errorf("charged %d, ₹%d", n, total)
		}
	})
	if !(queued.Latency.P50 < sync.Latency.P50/10) {
		t.Errorf("queued p50 %s not far below sync p50 %s", queued.Latency.P50, sync.Latency.P50)
	}
}

func TestCheckoutRecordsEveryAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, _, _, _ := flashSale(t, Sync, 10, time.Second)
		if st.OK != 10 {
			t.Fatalf("at 1 buyer a second 4 threads keep up: %+v", st)
		}
		if st.OKLatency.P50 != 3100*time.Millisecond {
			t.Errorf("p50 %s, want 3.1 s: stock 20 ms + payment 50 ms + receipt 3 s + warehouse 30 ms", st.OKLatency.P50)
		}
	})
}

// A buyer counts, and its deadline runs, from Arrive, not from when its
// goroutine gets to run: a late goroutine still meets the deadline its
// arrival set.
func TestCheckoutArriveCountsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		env := Env{Publisher: &fakePublisher{}}
		pay, err := NewPayments(ctx, PaymentsConfig{}, env)
		if err != nil {
			t.Fatal(err)
		}
		defer pay.Close()
		co, err := NewCheckout(ctx, CheckoutConfig{Mode: Queued, Threads: 1, Timeout: 5 * time.Second}, env, pay)
		if err != nil {
			t.Fatal(err)
		}
		defer co.Close()
		buy := co.Arrive(ctx, Purchase{OrderID: 881})
		if st := co.Stats(); st.Requests != 1 || st.Waiting != 1 {
			t.Fatalf("after Arrive: %d arrived, %d waiting; want 1 and 1", st.Requests, st.Waiting)
		}
		time.Sleep(6 * time.Second) // the buyer's goroutine runs only now, past its deadline
		// The deadline may find it still waiting for the one thread or
		// already past it: either way it is an error page, not a sale.
		if _, err := buy(); !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrNoThread) {
			t.Errorf("a buyer served after its deadline had passed: %v; want %v or %v", err, ErrTimeout, ErrNoThread)
		}
	})
}

// A thread a buyer finishes with goes straight to the buyer who waited
// longest: at no moment does the checkout show a free thread while a buyer
// waits for one, which a lesson that stops the lab at any moment would see.
func TestCheckoutHandsAFreedThreadOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var co *Checkout
		var atFirstAnswer CheckoutStats
		answered := false
		env := Env{Publisher: &fakePublisher{}, Sink: func(e Event) {
			// Whichever buyer took the thread first is answered first.
			if e.Kind == EventCheckout && !answered {
				answered, atFirstAnswer = true, co.Stats()
			}
		}}
		pay, err := NewPayments(ctx, PaymentsConfig{}, env)
		if err != nil {
			t.Fatal(err)
		}
		defer pay.Close()
		co, err = NewCheckout(ctx, CheckoutConfig{Mode: Sync, Threads: 1, Receipt: time.Second}, env, pay)
		if err != nil {
			t.Fatal(err)
		}
		defer co.Close()
		first, second := co.Arrive(ctx, Purchase{OrderID: 1}), co.Arrive(ctx, Purchase{OrderID: 2})
		done := make(chan error, 1)
		go func() { _, err := second(); done <- err }()
		if _, err := first(); err != nil {
			t.Fatalf("first buyer: %v", err)
		}
		if atFirstAnswer.Busy != 1 || atFirstAnswer.Waiting != 0 {
			t.Errorf("when the first buyer was answered: %d busy, %d waiting; want the thread handed to the other (1 busy, 0 waiting)",
				atFirstAnswer.Busy, atFirstAnswer.Waiting)
		}
		if err := <-done; err != nil {
			t.Errorf("second buyer: %v", err)
		}
	})
}
