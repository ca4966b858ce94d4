package lab

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// The ring keeps every series on one grid of lab time: a read fills the
// steps since the last one, a series first seen late starts there, one not
// read keeps its last value, and the oldest values go past SeriesLen.
func TestSeriesRecord(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(step int) time.Time { return t0.Add(time.Duration(step) * SeriesEvery) }
	s := newSeriesSet()
	s.record([]seriesSample{{"lag(billing)", "lag", "billing", 5}}, at(0), at(0))
	s.record([]seriesSample{{"lag(billing)", "lag", "billing", 9}}, at(1), at(3)) // a late read fills steps 1-3
	s.record([]seriesSample{{"depth(receipts)", "depth", "receipts", 2}}, at(4), at(4))
	got := s.states()
	if len(got) != 2 || got[0].Name != "lag(billing)" || got[1].Name != "depth(receipts)" {
		t.Fatalf("series %+v: want lag(billing) then depth(receipts)", got)
	}
	if want := []int64{5, 9, 9, 9, 9}; !reflect.DeepEqual(got[0].Values, want) || !got[0].Start.Equal(at(0)) {
		t.Errorf("lag(billing) from %v: %v, want %v from %v", got[0].Start, got[0].Values, want, at(0))
	}
	if want := []int64{2}; !reflect.DeepEqual(got[1].Values, want) || !got[1].Start.Equal(at(4)) {
		t.Errorf("depth(receipts) from %v: %v, want %v from %v", got[1].Start, got[1].Values, want, at(4))
	}
	if !got[0].End().Equal(got[1].End()) || got[0].Every != SeriesEvery || got[0].Unit != "msgs" {
		t.Errorf("series end at %v and %v, every %v, unit %q: want one grid of %v in msgs", got[0].End(), got[1].End(), got[0].Every, got[0].Unit, SeriesEvery)
	}
	// The copy is the caller's.
	got[0].Values[0] = 100
	if s.states()[0].Values[0] != 5 {
		t.Error("states shares its values with the ring")
	}
	// Past SeriesLen the oldest go, and Start moves with them.
	for i := 5; i < SeriesLen+10; i++ {
		s.record([]seriesSample{{"lag(billing)", "lag", "billing", int64(i)}}, at(i), at(i))
	}
	lag := s.states()[0]
	if len(lag.Values) != SeriesLen || lag.Values[len(lag.Values)-1] != SeriesLen+9 || !lag.End().Equal(at(SeriesLen+10)) {
		t.Errorf("after %d steps: %d values ending %d at %v; want %d ending %d at %v",
			SeriesLen+10, len(lag.Values), lag.Values[len(lag.Values)-1], lag.End(), SeriesLen, SeriesLen+9, at(SeriesLen+10))
	}
	// A read after a long gap fills at most SeriesLen steps.
	s.record([]seriesSample{{"lag(billing)", "lag", "billing", 1}}, at(SeriesLen+10), at(10*SeriesLen))
	if lag := s.states()[0]; len(lag.Values) != SeriesLen || !lag.End().Equal(at(10*SeriesLen+1)) {
		t.Errorf("after a gap: %d values to %v, want %d to %v", len(lag.Values), lag.End(), SeriesLen, at(10*SeriesLen+1))
	}
}

// A group that falls behind shows in the lab's series as lag that rises
// and drains, and the series survives a recording's JSON.
func TestSeriesFollowLagAndDepth(t *testing.T) {
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

// A snapshot's chart ends at the value its panels show: the last sample
// may be older (and stays so while paused).
func TestSeriesEndAtTheSnapshotsValue(t *testing.T) {
	series := []SeriesState{{Name: "lag(billing)", Values: []int64{100, 150, 174}}, {Name: "depth(gone)", Values: []int64{3}}}
	alignSeries(series, broker.Snapshot{Groups: []broker.ConsumerGroupState{{Group: "billing", Lag: 170}}})
	if got := series[0].Values; got[2] != 170 || got[1] != 150 {
		t.Errorf("lag(billing) = %v; want it to end at the snapshot's 170, the rest as sampled", got)
	}
	if got := series[1].Values[0]; got != 3 {
		t.Errorf("a series the snapshot cannot read changed to %d", got)
	}
}
