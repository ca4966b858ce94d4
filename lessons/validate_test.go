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
