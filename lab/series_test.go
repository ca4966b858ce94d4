package lab

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A group that falls behind shows in the lab's series as lag that rises
// and drains, and the series survives a recording's JSON.
func TestSeriesFollowLagAndDepth(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "produce orders count=30",
		"queue create receipts", "send receipts count=4",
		"consumer start c1 group=billing topic=orders rate=40/s", "wait lag(billing) == 0 timeout=20s")
	find := func(snap Snapshot, name string) *SeriesState {
		for i := range snap.Series {
			if snap.Series[i].Name == name {
				return &snap.Series[i]
			}
		}
		return nil
	}
	// The sampler reads after the wait: poll until a zero lag is in.
	var snap Snapshot
	waitFor(t, 10*time.Second, "lag(billing) sampled at 0 after a backlog", func() bool {
		snap = l.Snapshot()
		s := find(snap, "lag(billing)")
		return s != nil && len(s.Values) > 0 && s.Values[len(s.Values)-1] == 0
	})
	lag := find(snap, "lag(billing)")
	peak := int64(0)
	for _, v := range lag.Values {
		peak = max(peak, v)
	}
	if peak < 5 {
		t.Errorf("lag(billing) %v: want a backlog of several messages before it drained", lag.Values)
	}
	if d := snap.Time.Sub(lag.End()); d < -SeriesEvery || d > 2*time.Second {
		t.Errorf("lag(billing) ends at %v, the lab is at %v: want the newest step within a moment of now", lag.End(), snap.Time)
	}
	depth := find(snap, "depth(receipts)")
	if depth == nil || depth.Values[len(depth.Values)-1] != 4 {
		t.Fatalf("depth(receipts) %+v: want the 4 messages sent", depth)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Series) != len(snap.Series) {
		t.Fatalf("series after JSON: %+v, want %+v", back.Series, snap.Series)
	}
	for i, s := range back.Series {
		w := snap.Series[i]
		if s.Name != w.Name || !s.Start.Equal(w.Start) || s.Every != w.Every || !reflect.DeepEqual(s.Values, w.Values) {
			t.Errorf("series after JSON: %+v, want %+v", s, w)
		}
	}
}

// While a check waits for a leader, the snapshot says what it reads and
// how far it has come; when the check ends, Drain is gone.
func TestDrainProgress(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=2", "produce orders count=2", "kill n2", "kill n3")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Check(ctx)
	}()
	var last *DrainState
	waitFor(t, 10*time.Second, "the check to say it waits on a partition of orders", func() bool {
		last = l.Snapshot().Drain
		return last != nil && last.Total >= 3 && strings.HasPrefix(last.Reading, "orders/") && last.Done < last.Total
	})
	cancel()
	<-done
	if d := l.Snapshot().Drain; d != nil {
		t.Errorf("after the check: drain %+v, want none", d)
	}
}
