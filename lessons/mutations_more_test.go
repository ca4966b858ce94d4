package lessons

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// moreMutations are mutations beyond a lesson's one in mutations, for a
// lesson whose checks guard more than one behaviour. Each must make an
// expectation fail; each is played only up to its first failure.
var moreMutations = map[string][]struct{ old, new, why string }{
	"fifo-queues": {
		{
			old: "queue create updates fifo=true\nworker start w1", new: "queue create updates\nworker start w1",
			why: "a standard queue, which ignores message groups, hands w1 and w2 two of order 881's updates at once, and w2, four times faster, finishes the later one first: order_violations == 0 fails",
		},
		{
			old: `send updates key=order-881 group=order-881 value="order 881 update {n}" count=5`, new: `send updates key=order-881 group=order-881-{n} value="order 881 update {n}" count=5`,
			why: "in the four-order scene, order 881's updates each in a group of their own are the oldest two ready when the clock runs, so w1 takes the first and w2 the second and finishes it first: order_violations == 0 fails",
		},
		{
			old: "do: worker start w4 queue=updates work=1s\n", new: "",
			why: "three workers for four groups leave one order waiting at every moment and need 7 s for the twenty updates: processed(updates) == 20 fails at 6.5 s",
		},
		{
			old: "do: worker start w4 queue=updates work=1s\n", new: "do: worker start w4 queue=updates work=1s\ndo: worker start w5 queue=updates work=1s\ndo: worker start w6 queue=updates work=1s\n",
			why: "six workers take turns at the four groups' lines, each of them working some update, one more than the budget pays for: workers(updates) <= 5 fails",
		},
	},
	"the-log": {
		{
			old: "do: topic create payments partitions=1 segment=10 retention=2m", new: "do: topic create payments partitions=1 segment=100 retention=2m",
			why: "segments of 100 payments keep the first of each about 220 s, its segment's fill time plus the retention: followed from 200 s into the day, payment 100 is still on disk when the payment 182 offsets later arrives, and logstart(payments/0) > oldest fails",
		},
	},
	"your-own-sqs-worker": {
		{
			old: "work=3200ms extend=2s crash=after-work", new: "work=3200ms extend=5500ms crash=after-work",
			why: "the copy that dies in the deploy hides receipt 883 for 5.5 s from its last renewal, at 2.75 s, so the fresh copy gets it about 8.25 s after the first receive: oldest_age(receipts) <= 7 fails",
		},
	},
	"delivery-guarantees": {
		{
			old: "do: seek cashback cashbacks/1 to=2", new: "do: seek cashback cashbacks/1 to=0",
			why: "replaying partition 1 from 0 pays user 7's two spring cashbacks again: the user 7 balance check and duplicate_effects == 0 fail",
		},
		{
			old: "do: seek cashback cashbacks/1 to=2", new: "do: seek cashback cashbacks/0 to=0",
			why: "replaying partition 0 pays 882 and 884 again and never 881: user 42 ends at ₹200, and the ₹150 check and duplicate_effects == 0 fail",
		},
	},
}

// TestCurriculumMutationsMore plays each of moreMutations: every one must
// make its lesson fail an expectation.
func TestCurriculumMutationsMore(t *testing.T) {
	t.Parallel()
	for id, muts := range moreMutations {
		t.Run(id, func(t *testing.T) {
			switch {
			case raceEnabled:
				t.Skip("not under the race detector")
			}
			les, err := Find(id)
			if err != nil {
				t.Fatal(err)
			}
			src, err := curriculumFS.ReadFile(les.File)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range muts {
				if !bytes.Contains(src, []byte(m.old)) {
					t.Fatalf("the mutation's text %q is not in %s", m.old, les.File)
				}
			}
			t.Parallel()
			for _, m := range muts {
				t.Run(label(m.new), func(t *testing.T) {
					t.Parallel()
					defer playTurns.take(playRank(id))()
					mutated, err := Parse(les.File, bytes.Replace(src, []byte(m.old), []byte(m.new), 1))
					if err != nil {
						t.Fatalf("the mutated lesson does not parse: %v", err)
					}
					var out bytes.Buffer
					err = PlayHeadless(ctxFor(t, 2*LessonTimeLimit), freePorts(mutated), &out, Options{Timing: "fast", FailFast: true})
					var fe *FailedError
					if !errors.As(err, &fe) {
						t.Fatalf("mutation (%s): want failed expectations, got %v\n%s", m.why, err, out.String())
					}
					t.Logf("%q → %q failed %d expectation(s), as it should: %s", m.old, m.new, len(fe.Failed), m.why)
				})
			}
		})
	}
}

// label names a mutation's subtest after the text it puts in.
func label(s string) string {
	s = strings.TrimPrefix(s, "do: ")
	if i := strings.Index(s, " value="); i > 0 {
		s = s[:i]
	}
	return strings.Join(slices.Collect(strings.FieldsSeq(s)), "_")
}
