package services

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A ceiling of 50 writes a second: 500 credits take 10 s of lab time,
// however fast the caller asks.
func TestWriteCeilingCapsWritesOnTheLabClock(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv()
	w, err := NewWallet(ctx, WalletConfig{Strategy: StrategyNone, Writes: 50}, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, w)
	start := env.clock.Now()
	const n = 500
	for i := range n {
		if err := w.Handle(ctx, Message{ID: fmt.Sprint("m", i), Key: "42"}); err != nil {
			t.Fatal(err)
		}
	}
	el := env.clock.Now().Sub(start)
	// The first write is free (a burst of one), the other 499 wait 20 ms each.
	if el < 9900*time.Millisecond || el > 10100*time.Millisecond {
		t.Errorf("%d writes took %s of lab time, want about 10 s", n, el)
	}
	if b := balance(t, w); b != n*50 {
		t.Errorf("balance %d", b)
	}
	st := w.WriteStats()[0]
	if st.Writes != n || st.Ceiling != 50 || st.Throttled < n-2 {
		t.Errorf("write stats %+v", st)
	}

	// Without a ceiling no lab time passes.
	w2, err := NewWallet(ctx, WalletConfig{Name: "wallet2"}, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	closeOnCleanup(t, w2)
	before := env.clock.Now()
	for i := range 100 {
		if err := w2.Handle(ctx, Message{ID: fmt.Sprint("m", i), Key: "42"}); err != nil {
			t.Fatal(err)
		}
	}
	if el := env.clock.Now().Sub(before); el != 0 {
		t.Errorf("no ceiling, yet %s passed", el)
	}
}

// Workers that each finish 25 messages a second, against a database that
// takes 50 writes a second: two workers reach the ceiling, more do not help.
func TestWriteCeilingMakesMoreWorkersStopHelping(t *testing.T) {
	throughput := func(workers int) (per float64) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := NewWallet(ctx, WalletConfig{Strategy: StrategyDedupeTable, Writes: 50}, Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var wg sync.WaitGroup
			var mu sync.Mutex
			done := 0
			end := time.Now().Add(10 * time.Second)
			for k := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						time.Sleep(40 * time.Millisecond) // the worker's own work
						if time.Now().After(end) {
							return
						}
						if err := w.Handle(ctx, Message{ID: fmt.Sprintf("w%d-%d", k, i), Key: "42"}); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						done++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			per = float64(done) / 10
		})
		return per
	}
	want := map[int]float64{1: 25, 2: 50, 4: 50, 8: 50}
	for _, workers := range []int{1, 2, 4, 8} {
		got := throughput(workers)
		t.Logf("%d workers: %.1f credits/s", workers, got)
		if got < want[workers]*0.95 || got > want[workers]*1.05 {
			t.Errorf("%d workers: %.1f credits/s, want %.0f ± 5%%", workers, got, want[workers])
		}
	}
}
