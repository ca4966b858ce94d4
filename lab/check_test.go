package lab

import (
	"context"
	"slices"
	"testing"
	"time"
)

// ReadTopic gives every committed record of a topic with its key and
// value, and says so when the topic does not exist.
func TestReadTopic(t *testing.T) {
	l := newLab(t)
	mustRun(t, l, "topic create orders-dlt partitions=2", `produce orders-dlt key=order-{n} value="order {n} amount=four-fifty" count=3`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := l.ReadTopic(ctx, "orders-dlt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Key+": "+r.Value)
	}
	slices.Sort(got)
	want := []string{"order-1: order 1 amount=four-fifty", "order-2: order 2 amount=four-fifty", "order-3: order 3 amount=four-fifty"}
	if !slices.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
	if _, err := l.ReadTopic(ctx, "nope"); err == nil {
		t.Error("reading a topic that does not exist gave no error")
	}
}
