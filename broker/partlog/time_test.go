package partlog

import "testing"

// firstAtOrAfter is the obvious linear answer OffsetForTime must match.
func firstAtOrAfter(all []Record, t int64) (int64, bool) {
	for _, r := range all {
		if r.Timestamp >= t {
			return r.Offset, true
		}
	}
	return 0, false
}

func TestOffsetForTimeMonotonic(t *testing.T) {
	l := newLog(t, Config{SegmentRecords: 5})
	mustAppend(t, l, Batch{Records: recs("t", 20, 100, 1000e9)}, 1) // ts 1000s..1019s
	for _, tc := range []struct {
		t    int64
		want int64
		ok   bool
	}{
		{0, 0, true},
		{1000e9, 0, true},
		{1000e9 + 1, 1, true},
		{1007e9, 7, true},
		{1019e9, 19, true},
		{1019e9 + 1, 20, false}, // beyond the newest: log end, not found
	} {
		got, ok := l.OffsetForTime(tc.t)
		if got != tc.want || ok != tc.ok {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d, %v", tc.t, got, ok, tc.want, tc.ok)
		}
	}
}

func TestOffsetForTimeNonMonotonic(t *testing.T) {
	// Producers' clocks disagree; the answer is still the first record (in
	// offset order) at or after t.
	ts := []int64{50, 10, 70, 30, 70, 20, 90, 5, 60, 60, 100, 1, 95, 40, 80}
	l := newLog(t, Config{SegmentRecords: 4, IndexIntervalBytes: 1})
	var all []Record
	for _, v := range ts {
		r := Record{Timestamp: v, Value: []byte("x")}
		res := mustAppend(t, l, Batch{Records: []Record{r}}, 1)
		r.Offset, r.Epoch = res.BaseOffset, 1
		all = append(all, r)
	}
	for q := int64(-1); q <= 102; q++ {
		want, wantOK := firstAtOrAfter(all, q)
		if !wantOK {
			want = l.EndOffset()
		}
		got, ok := l.OffsetForTime(q)
		if got != want || ok != wantOK {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d, %v", q, got, ok, want, wantOK)
		}
	}
	for i, s := range l.Segments() {
		if s.TimeIndexEntries == 0 && s.Records > 1 {
			t.Errorf("segment %d has no time index entries: %+v", i, s)
		}
	}
}

func TestOffsetForTimeRandomAfterRetention(t *testing.T) {
	seed := uint64(7)
	rnd := func(n int) int64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int64(seed>>33) % int64(n)
	}
	l := newLog(t, Config{SegmentRecords: 9, IndexIntervalBytes: 30, RetentionBytes: 3000})
	for range 300 {
		b := Batch{Records: make([]Record, 1+rnd(4))}
		for i := range b.Records {
			b.Records[i] = Record{Timestamp: 1000 + rnd(500), Value: make([]byte, rnd(40))}
		}
		mustAppend(t, l, b, 1)
	}
	l.EnforceRetention(0)
	all := readAll(t, l)
	for q := int64(990); q <= 1510; q++ {
		want, wantOK := firstAtOrAfter(all, q)
		if !wantOK {
			want = l.EndOffset()
		}
		if got, ok := l.OffsetForTime(q); got != want || ok != wantOK {
			t.Fatalf("OffsetForTime(%d) = %d, %v; want %d, %v", q, got, ok, want, wantOK)
		}
	}
}
