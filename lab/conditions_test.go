package lab

import "testing"

// An expect on a value only a partition's leader gives waits out an
// election rather than fail the moment after a leader died.
func TestExpectWaitsOutAnElection(t *testing.T) {
	t.Parallel()
	l := newLab(t)
	mustRun(t, l, "topic create orders partitions=1", "elect n1 orders/0", "produce orders key=881 count=3",
		"kill n1", "expect epoch(orders/0, 0) == epoch(orders/0@n2, 0)")
}
