package series

import (
	"reflect"
	"testing"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// The ring keeps every series on one grid of lab time: a read fills the
// steps since the last one, a series first seen late starts there, one not
// read keeps its last value, and the oldest values go past Len.
func TestSeriesRecord(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(step int) time.Time { return t0.Add(time.Duration(step) * Every) }
	s := newSet()
	s.record([]sample{{"lag(billing)", "lag", "billing", 5}}, at(0), at(0))
	s.record([]sample{{"lag(billing)", "lag", "billing", 9}}, at(1), at(3)) // a late read fills steps 1-3
	s.record([]sample{{"depth(receipts)", "depth", "receipts", 2}}, at(4), at(4))
	got := s.States()
	if len(got) != 2 || got[0].Name != "lag(billing)" || got[1].Name != "depth(receipts)" {
		t.Fatalf("series %+v: want lag(billing) then depth(receipts)", got)
	}
	if want := []int64{5, 9, 9, 9, 9}; !reflect.DeepEqual(got[0].Values, want) || !got[0].Start.Equal(at(0)) {
		t.Errorf("lag(billing) from %v: %v, want %v from %v", got[0].Start, got[0].Values, want, at(0))
	}
	if want := []int64{2}; !reflect.DeepEqual(got[1].Values, want) || !got[1].Start.Equal(at(4)) {
		t.Errorf("depth(receipts) from %v: %v, want %v from %v", got[1].Start, got[1].Values, want, at(4))
	}
	if !got[0].End().Equal(got[1].End()) || got[0].Every != Every || got[0].Unit != "msgs" {
		t.Errorf("series end at %v and %v, every %v, unit %q: want one grid of %v in msgs", got[0].End(), got[1].End(), got[0].Every, got[0].Unit, Every)
	}
	// The copy is the caller's.
	got[0].Values[0] = 100
	if s.States()[0].Values[0] != 5 {
		t.Error("states shares its values with the ring")
	}
	// Past Len the oldest go, and Start moves with them.
	for i := 5; i < Len+10; i++ {
		s.record([]sample{{"lag(billing)", "lag", "billing", int64(i)}}, at(i), at(i))
	}
	lag := s.States()[0]
	if len(lag.Values) != Len || lag.Values[len(lag.Values)-1] != Len+9 || !lag.End().Equal(at(Len+10)) {
		t.Errorf("after %d steps: %d values ending %d at %v; want %d ending %d at %v",
			Len+10, len(lag.Values), lag.Values[len(lag.Values)-1], lag.End(), Len, Len+9, at(Len+10))
	}
	// A read after a long gap fills at most Len steps.
	s.record([]sample{{"lag(billing)", "lag", "billing", 1}}, at(Len+10), at(10*Len))
	if lag := s.States()[0]; len(lag.Values) != Len || !lag.End().Equal(at(10*Len+1)) {
		t.Errorf("after a gap: %d values to %v, want %d to %v", len(lag.Values), lag.End(), Len, at(10*Len+1))
	}
}

// A snapshot's chart ends at the value its panels show: the last sample
// may be older (and stays so while paused).
func TestSeriesEndAtTheSnapshotsValue(t *testing.T) {
	series := []State{{Name: "lag(billing)", Values: []int64{100, 150, 174}}, {Name: "depth(gone)", Values: []int64{3}}}
	Align(series, broker.Snapshot{Groups: []broker.ConsumerGroupState{{Group: "billing", Lag: 170}}})
	if got := series[0].Values; got[2] != 170 || got[1] != 150 {
		t.Errorf("lag(billing) = %v; want it to end at the snapshot's 170, the rest as sampled", got)
	}
	if got := series[1].Values[0]; got != 3 {
		t.Errorf("a series the snapshot cannot read changed to %d", got)
	}
}
