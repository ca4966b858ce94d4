package fanout

import "testing"

// A subscriber that falls behind loses values and counts them; the others
// get every value; a closed subscription gets nothing more, and one made
// after CloseAll is closed from the start.
func TestSetDropsForAFullSubscriber(t *testing.T) {
	var s Set[int]
	slow, fast := s.Subscribe(1), s.Subscribe(10)
	for i := range 3 {
		s.Send(i)
	}
	if got := slow.Dropped(); got != 2 {
		t.Errorf("the slow subscriber dropped %d, want 2", got)
	}
	if got := fast.Dropped(); got != 0 {
		t.Errorf("the fast subscriber dropped %d, want 0", got)
	}
	if v := <-slow.C; v != 0 {
		t.Errorf("the slow subscriber got %d first, want 0", v)
	}
	for want := range 3 {
		if v := <-fast.C; v != want {
			t.Errorf("the fast subscriber got %d, want %d", v, want)
		}
	}
	slow.Close()
	slow.Close()
	if _, ok := <-slow.C; ok {
		t.Error("a closed subscription still delivers")
	}
	if n := s.Len(); n != 1 {
		t.Errorf("%d subscribers after one closed, want 1", n)
	}
	s.Send(7)
	s.CloseAll()
	if v, ok := <-fast.C; !ok || v != 7 {
		t.Errorf("before its close the subscriber got %d, %v; want 7", v, ok)
	}
	if _, ok := <-fast.C; ok {
		t.Error("CloseAll left a subscription open")
	}
	if _, ok := <-s.Subscribe(4).C; ok {
		t.Error("a subscription made after CloseAll is open")
	}
}
