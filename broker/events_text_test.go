package broker

import (
	"fmt"
	"testing"
	"time"
)

// The append and commit events of a produced batch get their sentence only
// when they leave the bus; it must read exactly as if written at once, for
// subscribers and for Events alike.
func TestLazyEventText(t *testing.T) {
	t.Parallel()
	events := []Event{
		{Kind: EventAppend, Node: "n2", Group: "orders/0", Epoch: 3, From: 10, To: 20, lazy: true},
		{Kind: EventCommit, Node: "n1", Group: "orders/1", Epoch: 12, From: 0, To: 1, lazy: true},
		{Kind: EventCommit, Node: "n3", Group: "t/7", Epoch: 1 << 40, From: 1 << 33, To: 1<<33 + 100, lazy: true},
	}
	want := []string{
		fmt.Sprintf("%s on %s wrote offsets %d–%d at epoch %d", "orders/0", "n2", 10, 19, 3),
		fmt.Sprintf("%s committed offsets %d–%d; high-water mark %d", "orders/1", 0, 0, 1),
		fmt.Sprintf("%s committed offsets %d–%d; high-water mark %d", "t/7", int64(1<<33), int64(1<<33+99), int64(1<<33+100)),
	}
	for _, watched := range []bool{false, true} {
		b := newEventBus(time.Now)
		var sub *Subscription
		if watched {
			sub = b.subscribe(len(events))
		}
		for _, e := range events {
			b.emit(e)
		}
		got := b.since(0)
		if len(got) != len(events) {
			t.Fatalf("watched=%v: since returned %d events, want %d", watched, len(got), len(events))
		}
		for i, e := range got {
			if e.Text != want[i] || e.lazy {
				t.Errorf("watched=%v: since: event %d text %q (lazy %v), want %q", watched, i, e.Text, e.lazy, want[i])
			}
		}
		if again := b.since(0); again[0].Text != want[0] {
			t.Errorf("watched=%v: second since: %q, want %q", watched, again[0].Text, want[0])
		}
		if sub != nil {
			for i := range events {
				e := <-sub.C
				if e.Text != want[i] || e.lazy {
					t.Errorf("subscriber: event %d text %q (lazy %v), want %q", i, e.Text, e.lazy, want[i])
				}
			}
			sub.Close()
		}
	}
}
