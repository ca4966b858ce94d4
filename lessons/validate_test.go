package lessons

import (
	"strings"
	"testing"
)

// A load may send to a queue the lesson created, as to a topic; a name
// that is neither, or a queue of an earlier cluster, is a problem at its
// line.
func TestCheckLoadOntoQueue(t *testing.T) {
	const fence = "```"
	src := `---
id: loads
title: Loads onto queues
concepts: [load]
---

## One step

` + fence + `lab
cluster nodes=3
queue create orders max-length=10
load orders rate=100/s for=1s
load ordres rate=100/s for=1s
cluster nodes=3
load orders rate=100/s for=1s
` + fence + `

` + fence + `predict
Refused?
- [x] yes
- [ ] no
why: the queue is full.
` + fence + `

` + fence + `expect
rejected > 0
` + fence + `
`
	got := Check("loads.md", []byte(src))
	var lines []int
	for _, p := range got {
		lines = append(lines, p.Line)
		if !strings.Contains(p.Msg, "no topic or queue") {
			t.Errorf("problem %s: want it to say there is no such topic or queue", p)
		}
	}
	if len(got) != 2 || lines[0] != 13 || lines[1] != 15 {
		t.Errorf("problems at lines %v, want 13 (a misspelt queue) and 15 (a queue of the old cluster): %v", lines, got)
	}
}

// A task's also: is another way from where its do: starts, so both may
// create the same topic; a third create after the task is still one too
// many.
func TestCheckTaskWaysStartAlike(t *testing.T) {
	const fence = "```"
	src := `---
id: ways
title: Two ways to one topic
concepts: [retention]
---

## One step

` + fence + `lab
cluster nodes=3
` + fence + `

` + fence + `task
Create payments with a retention you choose.
do: topic create payments partitions=1 retention=5m
also: topic create payments partitions=1 retention=2m
decide: how long payments keeps its records
wait: logstart(payments/0) == 0
` + fence + `

` + fence + `predict
Kept?
- [x] yes
- [ ] no
why: retention is longer than the wait.
` + fence + `

` + fence + `lab
topic create payments partitions=1
` + fence + `

` + fence + `expect
logstart(payments/0) == 0
` + fence + `
`
	got := Check("ways.md", []byte(src))
	if len(got) != 1 || got[0].Line != 29 || !strings.Contains(got[0].Msg, "created a second time") {
		t.Errorf("want one problem, the create at line 29 after the task: %v", got)
	}
}
