package lab

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A member joins a group while the others hold records they fetched and
// cannot work on yet: lab time is paused, so the rebalance goes ahead
// without waiting for them (its timeouts run on the wall clock). With
// eager rebalancing every member stops and the next generation starts
// every partition at the group's last commit. A member that works on the
// records it held after the generation ended, and commits them in the
// new one, reads them a second time on a partition it kept; one that
// leaves uncommitted what it processed reads those again. Neither may
// happen: records of an ended generation are left for the new one, and
// what was processed is committed on revoke. Only a partition that
// changed hands may repeat work, and here none was in the middle of any.
func TestRebalanceKeepsPositionsOfKeptPartitions(t *testing.T) {
	t.Parallel() // on labs of their own, they mostly wait on lab time
	for _, commit := range []string{"each", "poll"} {
		t.Run("commit="+commit, func(t *testing.T) {
			t.Parallel()
			opts := " rate=50/s"
			if commit == "poll" {
				opts += " commit=poll"
			}
			l := newLab(t)
			mustRun(t, l, "topic create orders partitions=4", "produce orders key=order-{n} count=200 batch=100",
				"consumer start c1 group=billing topic=orders"+opts,
				"consumer start c2 group=billing topic=orders"+opts,
				"wait delivered(billing) >= 20", "pause")
			before := owners(t, l, "c1", "c2")
			mustRun(t, l, "consumer start c3 group=billing topic=orders"+opts)
			after := owners(t, l, "c1", "c2", "c3")
			mustRun(t, l, "resume", "wait lag(billing) == 0 timeout=60s")
			times := map[string]int{}
			at := map[string]string{}
			for _, d := range l.Deliveries() {
				times[d.MsgID]++
				at[d.MsgID] = fmt.Sprintf("orders/%d", d.Partition)
			}
			repeats := map[string]int{}
			for id, n := range times {
				if n > 1 {
					repeats[at[id]] += n - 1
				}
			}
			kept := 0
			for tp, owner := range before {
				if after[tp] != owner {
					continue
				}
				kept++
				if repeats[tp] > 0 {
					t.Errorf("%s stayed with %s across the rebalance, and %d of its records came again", tp, owner, repeats[tp])
				}
			}
			if kept == 0 || len(times) != 200 {
				t.Fatalf("%d partitions kept their owner and %d records were delivered; want some kept and all 200", kept, len(times))
			}
			t.Logf("owners before %v, after %v; records delivered again, by partition: %v", before, after, repeats)
		})
	}
}

// owners maps each partition to the consumer that owns it, once the
// named consumers share all four partitions in one generation.
func owners(t *testing.T, l *Lab, names ...string) map[string]string {
	t.Helper()
	var out map[string]string
	waitFor(t, 20*time.Second, fmt.Sprintf("%v to share the four partitions in one generation", names), func() bool {
		out = map[string]string{}
		gen := -1
		for _, cs := range l.Snapshot().Consumers {
			if !slices.Contains(names, cs.Name) {
				continue
			}
			if gen >= 0 && cs.Generation != gen {
				return false
			}
			gen = cs.Generation
			for _, tp := range cs.Assignment {
				out[tp] = cs.Name
			}
		}
		return len(out) == 4
	})
	return out
}
