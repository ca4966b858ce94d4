package lessons

import (
	"strings"
	"testing"
)

const recallLesson = `---
id: recall
title: Recall
concepts: [dlq]
---

## Permanent failures go straight to the dead-letter queue

A worker that sorts its errors parks a bad request at once.

` + "```predict" + `
The gateway rejects a payment as invalid. How many times is it tried?
- [ ] 5 times, with backoff
- [x] once: a permanent failure goes to the dead-letter queue
why: it can never succeed.
` + "```" + `

## Receipt 881 waits

The queue hides a received message for its visibility timeout, here 2 s.

` + "```predict" + `
A worker takes receipt 881 at 10 s and dies. At what second can another worker get it?
answer: 12 ± 0.5 s
why: 10 + 2.
` + "```" + `

` + "```predict" + `
The queue's timeout is 3 s here. When is the message visible again?
answer: 3 ± 0.5 s
why: the question said so.
` + "```" + `

` + "```predict" + `
recall: the learner names the rule back before using it
The gateway rejects a payment as invalid. How many times is it tried?
- [ ] 5 times, with backoff
- [x] once: a permanent failure goes to the dead-letter queue
why: as before.
` + "```" + `

` + "```expect" + `
lost == 0
` + "```" + `
`

func TestFindRecall(t *testing.T) {
	les, err := Parse("recall.md", []byte(recallLesson))
	if err != nil {
		t.Fatal(err)
	}
	if got := les.Steps[1].Blocks[3].Predict.Recall; got != "the learner names the rule back before using it" {
		t.Fatalf("recall: read as %q", got)
	}
	var got []string
	for _, r := range FindRecall([]*Lesson{les}) {
		got = append(got, r.String())
	}
	for _, want := range []string{
		"recall.md:11: the right choice's words dead-letter, failure, permanent, queue stand in the step's heading",
		"recall.md:28: the answer 3 stands in the question itself",
		"recall.md:34: asks nearly what recall.md:11 asked",
	} {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Errorf("no warning %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		// 10 + 2 is worked out, not read; a recall: question warns only as a repeat.
		if strings.HasPrefix(g, "recall.md:22:") || strings.HasPrefix(g, "recall.md:34:") && !strings.Contains(g, "asks nearly") {
			t.Errorf("warning for a question that reasons or says why it recalls: %s", g)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d warnings, want 3:\n%s", len(got), strings.Join(got, "\n"))
	}
}

func TestWordsFoldsFormsAndNumbers(t *testing.T) {
	got := strings.Join(words("The failures, 36,000 orders: it is Dead-Letter queues!"), " ")
	if want := "failure 36000 order dead-letter queue"; got != want {
		t.Errorf("words = %q, want %q", got, want)
	}
}

// A small number gives the answer away only as a count of the same thing;
// a large one, or one beside the thing the question counts, still does.
func TestFindRecallNumbersCountThings(t *testing.T) {
	cases := []struct {
		text, question, answer string
		warn                   bool
	}{
		{"Four workers; each worker finishes 50.", "By how many orders a second would the backlog shrink?", "50 ± 5 a second", false},
		{"The payment, sent with acks=1, waits.", "How many payments does the checker count as lost?", "1 ± 0.5", false},
		{"Fifty clicks arrive, each 20 bytes of payload.", "At which offset does the log start?", "20 ± 0.5", false},
		{"The database takes 20 writes a second.", "Four workers start. How many writes a second does it take?", "20 ± 4 a second", true},
		{"The wallet pays ₹50 cashback.", "How many rupees does the wallet hold?", "50 ± 0.5 ₹", true},
		{"The old log started at offset 20.", "At which offset does the log start?", "20 ± 0.5", true},
		{"The group finished 1,600 in the last run.", "How many orders a second does it finish?", "1,600 ± 5% a second", true},
		{"Three workers, 40 in all.", "What is the total?", "40 ± 1", true},
	}
	for _, c := range cases {
		src := "---\nid: n\ntitle: N\nconcepts: [c]\n---\n\n## Scene\n\n" + c.text + "\n\n```predict\n" + c.question + "\nanswer: " + c.answer + "\nwhy: because.\n```\n\n```expect\nlost == 0\n```\n"
		les, err := Parse("n.md", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		got := FindRecall([]*Lesson{les})
		if warned := len(got) > 0; warned != c.warn {
			t.Errorf("%q / %q: warned %v, want %v: %v", c.text, c.question, warned, c.warn, got)
		}
	}
}
