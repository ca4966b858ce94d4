package tui

// The demo's lesson on leader failover: each step's text, and the tasks,
// prediction and expectations it shows as the demo's cluster moves.

import (
	"fmt"
	"strconv"
)

type demoStep struct {
	title, text string
}

var demoSteps = []demoStep{
	{"Meet the cluster", "Three nodes hold the topic orders: three partitions, each a raft group with a replica on every node. " +
		"Each row of cells is one replica's log: ● is a committed entry, ○ one that is not yet on a majority, and the number is the epoch it was written in.\n\n" +
		"The leader (▲) takes every write; followers copy it a moment later. Watch the ○ turn into ●."},
	{"Kill the leader", "A leader that dies takes its uncommitted entries with it: they were only on its own disk. " +
		"After an election timeout the followers pick a new leader with a higher epoch."},
	{"Bring it back", "The old leader comes back believing in its old epoch. The new leader's log wins: " +
		"the entries the old leader never committed are cut (✂). A producer with acks=1 was told they were written."},
}

func (d *DemoSource) lesson(v *ViewState) *Lesson {
	s := demoSteps[d.step-1]
	ls := &Lesson{ID: "demo-failover", Title: "Demo: leader failover", Step: d.step, Steps: len(demoSteps),
		StepTitle: s.title, Text: s.text}
	p0 := v.Partitions[0]
	switch d.step {
	case 1:
		ls.Expectations = []Expectation{
			{Text: "leader(orders/0) != none", Checked: true, OK: p0.Leader != "", Got: gotIf(p0.Leader == "", "none")},
			{Text: "hwm(orders/0) > 1490", Checked: true, OK: p0.Replicas[0].HWM > 1490},
		}
	case 2:
		killed := d.killSaw
		ls.Tasks = []Task{{Text: "Kill the leader of orders/0", Hint: "select it with ←/→, press k", Done: killed}}
		choices := []string{fmt.Sprint(d.predEpochOr(p0.Epoch)), fmt.Sprint(d.predEpochOr(p0.Epoch) + 1), fmt.Sprint(d.predEpochOr(p0.Epoch) + 2)}
		ls.Prediction = &Prediction{Question: "What epoch will the next leader of orders/0 have?", Choices: choices, Chosen: d.chosen, Answer: -1}
		if d.chosen >= 0 && p0.Leader != "" && p0.Epoch > d.predEpoch {
			ls.Prediction.Answer = int(p0.Epoch - d.predEpoch)
			ls.Prediction.Answer = min(ls.Prediction.Answer, 2)
		}
		ls.Expectations = []Expectation{{Text: "leader(orders/0) != none", Checked: killed, OK: p0.Leader != "", Got: gotIf(p0.Leader == "", "none")}}
	case 3:
		ls.Tasks = []Task{{Text: "Restart the node you killed", Hint: "select it, press r", Done: d.restartSaw}}
		cut := false
		for _, p := range v.Partitions {
			for _, r := range p.Replicas {
				if r.Truncation != nil {
					cut = true
				}
			}
		}
		ls.Expectations = []Expectation{{Text: "a replica truncated its tail (✂)", Checked: d.restartSaw, OK: cut},
			{Text: "lost == 0", Checked: !d.checkedAt.IsZero(), OK: d.lost == 0, Got: gotIf(d.lost != 0, strconv.FormatInt(d.lost, 10))}}
	}
	return ls
}

func (d *DemoSource) predEpochOr(cur uint64) uint64 {
	if d.chosen >= 0 && d.predEpoch > 0 {
		return d.predEpoch
	}
	return cur
}

// gotIf is what a failed expectation shows it found: the demo names a
// value only when the expectation fails.
func gotIf(failed bool, got string) string {
	if failed {
		return got
	}
	return ""
}
