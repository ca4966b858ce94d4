package lessons

import (
	"fmt"
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
		"recall.md:11: the right choice's own words stand on the page before the question",
		"recall.md:28: the answer 3 stands in the question itself",
		"recall.md:34: asks what recall.md:11 asked",
	} {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Errorf("no warning %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if g := strings.Join(got, "\n"); !strings.Contains(g, `“dead-letter”, “failure”, “permanent”, “queue” in the step's heading`) {
		t.Errorf("the warning for line 11 does not name the heading's words as the choice writes them:\n%s", g)
	}
	for _, g := range got {
		// 10 + 2 is worked out, not read; a recall: question warns only as a repeat.
		if strings.HasPrefix(g, "recall.md:22:") || strings.HasPrefix(g, "recall.md:34:") && !strings.Contains(g, "asks what") {
			t.Errorf("warning for a question that reasons or says why it recalls: %s", g)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d warnings, want 3:\n%s", len(got), strings.Join(got, "\n"))
	}
}

func TestWordsFoldsFormsAndNumbers(t *testing.T) {
	got := strings.Join(words("The failures, 36,000 orders: it is Dead-Letter queues! Charged, charging, retries."), " ")
	if want := "failur 36000 order dead-letter queu charg charg retry"; got != want {
		t.Errorf("words = %q, want %q", got, want)
	}
}

// recallCase is one small lesson: a summary, earlier steps (each a
// heading, its text and the reveal of a question it asked), the
// question's step heading, the paragraph before it, and the question
// itself as a predict block's body.
type recallCase struct {
	name    string
	summary string
	earlier [][3]string // heading, text, why
	heading string
	text    string
	predict string
	warn    string // a word the warning must hold, or "" when none may be given
}

func (c recallCase) lesson(id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: %s\ntitle: T\nsummary: %q\nconcepts: [c]\n---\n\n", id, c.summary)
	for _, e := range c.earlier {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n```predict\nWhich of these?\n- [x] a plain thing\n- [ ] another\nwhy: %s\n```\n\n```expect\nlost == 0\n```\n\n", e[0], e[1], e[2])
	}
	fmt.Fprintf(&b, "## %s\n\n%s\n\n```predict\n%s\n```\n\n```expect\nlost == 0\n```\n", c.heading, c.text, c.predict)
	return b.String()
}

// The detector sees what a reviewer sees: the calibration cases below are
// built on the kinds of question a reader could answer without reasoning
// (they must warn) and on questions that need a rule applied to a new
// situation (they must not), with the words and numbers of real lessons.
func TestRecallCalibration(t *testing.T) {
	cases := []recallCase{
		// Giveaways in the words.
		{name: "the summary says what the broker does",
			summary: "A worker that dies before it commits: the broker hands the order to another worker, and the payment service answers with the first charge.",
			heading: "Worker A takes order 881", text: "Worker A died before it could commit, so the group still has order 881 as not done.",
			predict: "Worker A is gone. What does the broker do with the order?\n- [x] hands it to another worker, later\n- [ ] nothing: the charge went through\n- [ ] keeps it for worker A, however long that takes\nwhy: its lease ran out.",
			warn:    "“hands” in the lesson's summary"},
		{name: "the heading names the right choice",
			summary: "Retries, backoff and what not to retry.",
			heading: "Permanent failures go straight to the dead-letter queue", text: "A faulty release builds every request wrong; the gateway answers 400.",
			predict: "How is a request the gateway calls invalid handled?\n- [ ] retried 5 times with backoff\n- [x] parked in the dead-letter queue as a permanent failure\n- [ ] retried until the release is fixed\nwhy: it can never succeed.",
			warn:    "in the step's heading"},
		{name: "the paragraph just before says it",
			summary: "Delivery guarantees.",
			heading: "Why not exactly once?", text: "The wallet credited ₹50 and the commit was lost on the way, so the broker will deliver promo-1 again and the wallet credits it again.",
			predict: "A deploy restarts cashback-1. What does it do with promo-1?\n- [x] credits it again\n- [ ] nothing: it remembers the work\n- [ ] skips it: the broker saw it delivered\nwhy: the commit was lost.",
			warn:    "in the paragraph just before it"},
		{name: "the question sorts the errors itself",
			summary: "Retries.",
			heading: "A faulty release", text: "Twenty payments wait; the gateway now answers each with a validation error.",
			predict: "pay-1 sorts errors into transient and permanent. Where does a payment with a validation error go?\n- [x] to the dead-letter queue at once: the error is permanent\n- [ ] back to the queue for another attempt\n- [ ] nowhere: it is dropped\nwhy: a permanent error never succeeds.",
			warn:    "in the question itself"},
		{name: "an earlier step taught it in the same words",
			summary: "Queues.",
			earlier: [][3]string{{"Expired emails", "A TTL drops a message nobody took in time; the checker counts it as expired, not lost.", "the TTL ran out."}},
			heading: "Confirmations", text: "Five emails go in while no worker is running.",
			predict: "Nobody takes the five emails for a whole second. What becomes of them?\n- [x] the queue drops them and the checker counts them expired\n- [ ] they wait until a worker comes\n- [ ] the checker counts them as lost\nwhy: their TTL ran out.",
			warn:    "expired"},
		// Giveaways in the numbers.
		{name: "the question says the number",
			summary: "Backoff.",
			heading: "The first retry", text: "pay-1 starts without jitter.",
			predict: "pay-1 waits exactly 1 second before its first retry. How many seconds after the failure does the retry reach the gateway?\nanswer: 1 ± 0.1 s\nwhy: no jitter.",
			warn:    "the answer 1 stands in the question itself"},
		{name: "a large answer in the paragraph just before",
			summary: "Partitions.",
			heading: "Forty workers", text: "Thirty-two partitions let thirty-two workers finish 1,600 orders a second between them.",
			predict: "All forty workers join one group. How many orders a second does it finish?\nanswer: 1,600 ± 5% a second\nwhy: eight sit idle.",
			warn:    "the answer 1,600 stands in the paragraph just before it"},
		{name: "one product of two numbers just before",
			summary: "Back-pressure.",
			heading: "The wallet's database", text: "The database takes 20 writes a second; each worker handles 10 cashback messages a second, and two workers run.",
			predict: "How many cashbacks a second do the two finish?\nanswer: 20 ± 2 a second\nwhy: 2 × 10.",
			warn:    "10 × 2"},
		{name: "a small count with its thing and the question's words",
			summary: "Autoscaling.",
			heading: "Refunds", text: "One refund was sent two seconds ago and has waited since.",
			predict: "How many seconds does the oldest-age gauge of the refunds queue read?\nanswer: 2 ± 0.5 s\nwhy: the oldest waited that long.",
			warn:    "the answer 2 stands in the paragraph just before it"},
		{name: "an earlier reveal worked the number out",
			summary: "Back-pressure.",
			earlier: [][3]string{{"Four consumers", "Four consumers take one partition each.", "Four consumers at 50 a second finish 200 orders a second."}},
			heading: "Six consumers", text: "The clock stands.",
			predict: "Two more consumers join the four partitions' group. How many orders a second does it finish now?\nanswer: 200 ± 10 a second\nwhy: two sit idle.",
			warn:    "the answer 200 stands in an earlier reveal"},

		// Questions that need reasoning.
		{name: "a new situation's numbers, in the question",
			summary: "Ordering.",
			heading: "A hot key", text: "Seller 7 hashes to partition 2, sellers 3 and 12 to partitions 0 and 1.",
			predict: "50 orders arrive: 30 from seller 7, 10 each from sellers 3 and 12. Once partitions 0 and 1 are done, how many of seller 7's orders still wait?\nanswer: 20 ± 2\nwhy: partition 2 did as many as each other one."},
		{name: "a quotient under a hundred is chance",
			summary: "Back-pressure.",
			heading: "Keep the orders", text: "300 messages a second arrive for 200 a second of work, and the sale has four workers.",
			predict: "Suppose all four workers served orders. By how many orders a second would the backlog shrink?\nanswer: 50 ± 5 a second\nwhy: orders alone arrive at 150."},
		{name: "a small count of another scene",
			summary: "Ordering.",
			heading: "A stuck message blocks its line", text: "The shop writes order 881's three events (placed, paid, shipped), then order 883's placed, on partition 1 as well.",
			predict: "The first payment attempt failed and its retry is a minute away. How many events does partition 1 still have waiting for billing?\nanswer: 3 ± 0.5\nwhy: the line waits behind the retry."},
		{name: "numbers that name things",
			summary: "Ordering.",
			heading: "Sellers", text: "Seller 5 and seller 2 write to partition 10.",
			predict: "How many orders does partition 10 hold once seller 5 wrote 4 and seller 2 wrote 6?\nanswer: 10 ± 0.5\nwhy: 4 + 6."},
		{name: "the text weighs every choice alike",
			summary: "Visibility timeouts.",
			heading: "Work longer than the timeout", text: "SQS answers a delete with an older handle with success, yet the message may stay; the lab refuses it as stale. w1 acks at 5 seconds and w2 at 7 seconds.",
			predict: "Both workers keep taking receipt 881 and each acks after its five seconds of work. When is receipt 881 deleted?\n- [x] not at all, as long as the workers keep taking it like this\n- [ ] at 5 seconds, by w1's ack\n- [ ] at 7 seconds, by w2's ack\nwhy: each ack carries a stale handle."},
		{name: "the choice's words are common to every step",
			summary: "Failover.",
			heading: "n1 loses its followers", text: "A tracker writes 100 events to the same partition with acks=0, and the checkout sends a batch of 500.",
			predict: "n2 and n3 elect a new leader. Which records does its log hold once the checkout has its answer?\n- [x] offsets 0 to 1,499, then the batch resent, and no page views\n- [ ] offsets 0 to 1,499 only\n- [ ] everything n1 appended\nwhy: the tracker's acks=0 events were never copied."},
		{name: "recall: says why",
			summary: "Retries.",
			heading: "Permanent failures go straight to the dead-letter queue", text: "A faulty release builds every request wrong.",
			predict: "recall: the rule is named back before the next step uses it\nWhere does a permanently failing request go?\n- [x] straight to the dead-letter queue\n- [ ] back to the queue\nwhy: as the heading says."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			les, err := Parse("c.md", []byte(c.lesson("c")))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range FindRecall([]*Lesson{les}) {
				got = append(got, r.Text)
			}
			all := strings.Join(got, "\n")
			switch {
			case c.warn == "" && len(got) > 0:
				t.Errorf("warned for a question that needs reasoning:\n%s", all)
			case c.warn != "" && !strings.Contains(all, c.warn):
				t.Errorf("no warning holding %q; got:\n%s", c.warn, all)
			}
		})
	}
}

// The same rule asked again, with other numbers or in other words, is one
// question; a question of another rule in a like frame is not.
func TestRecallFindsRepeats(t *testing.T) {
	first := recallCase{summary: "Partitions.", heading: "Busy workers", text: "A group gives each partition to one member.",
		predict: "Six workers join a group on a topic of four partitions. How many of them are busy?\nanswer: 4 ± 0.5\nwhy: one member a partition: the other two sit idle, whatever their speed."}
	cases := []struct {
		name    string
		predict string
		repeat  bool
	}{
		{"other numbers", "Twelve workers join a group on a topic of eight partitions. How many of them are busy?\nanswer: 8 ± 0.5\nwhy: the rest sit idle.", true},
		{"other words, the same rule", "The billing group grows to ten members on six partitions. How many members bill orders?\nanswer: 6 ± 0.5\nwhy: one member a partition: the other four sit idle, whatever their speed.", true},
		{"another rule", "A topic keeps 500 bytes in segments of 200. At which offset does the log start after 1,000 bytes?\nanswer: 20 ± 0.5\nwhy: only closed segments are deleted.", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Parse("a.md", []byte(first.lesson("a")))
			if err != nil {
				t.Fatal(err)
			}
			second := first
			second.heading, second.text, second.predict = "Later", "The clock stands.", c.predict
			b, err := Parse("b.md", []byte(second.lesson("b")))
			if err != nil {
				t.Fatal(err)
			}
			var repeats []string
			for _, r := range FindRecall([]*Lesson{a, b}) {
				if strings.Contains(r.Text, "asks what") {
					repeats = append(repeats, r.String())
				}
			}
			if got := len(repeats) > 0; got != c.repeat {
				t.Errorf("found as a repeat: %v, want %v: %v", got, c.repeat, repeats)
			}
			if c.repeat && len(repeats) > 0 && !strings.HasPrefix(repeats[0], "b.md:") {
				t.Errorf("the repeat is named at the earlier question, not the later: %s", repeats[0])
			}
		})
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
		{"Audit joins with from=latest.", "The shop writes five more orders. How many orders does audit receive?", "5 ± 0.5", true},
		{"Audit joins with from=latest.", "The shop writes five orders, then seven more. How many does audit receive?", "12 ± 0.5", false},
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

// Every question of the curriculum asks for reasoning: the recall detector
// finds nothing in it.
func TestCurriculumHasNoRecall(t *testing.T) {

	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range FindRecall(all) {
		t.Errorf("%v", r)
	}
}

// A lesson checked alone draws the warnings it draws among all the
// others, repeats of other lessons' questions aside: how rare a word is
// does not depend on how many files are checked at once.
func TestRecallAloneAsAmongAll(t *testing.T) {
	all, err := Curriculum()
	if err != nil {
		t.Fatal(err)
	}
	among := map[string]bool{}
	for _, r := range FindRecall(all) {
		if !strings.Contains(r.Text, "asks what") {
			among[r.String()] = true
		}
	}
	alone := map[string]bool{}
	for _, l := range all {
		for _, r := range FindRecall([]*Lesson{l}) {
			if !strings.Contains(r.Text, "asks what") {
				alone[r.String()] = true
			}
		}
	}
	for r := range alone {
		if !among[r] {
			t.Errorf("only alone: %s", r)
		}
	}
	for r := range among {
		if !alone[r] {
			t.Errorf("only among all: %s", r)
		}
	}
}

// A numeric question's frame is an instrument a lesson reads after each
// new scene: the same "how many rupees does the wallet hold?" after
// another failure, explained by another rule, is not a repeat.
func TestRecallInstrumentIsNoRepeat(t *testing.T) {
	a := recallCase{summary: "Cashback.", heading: "The commit before the work", text: "cashback-1 commits, then crashes before it pays.",
		predict: "Once cashback-1 is restarted and has read to the end of the topic, how many rupees does user 42's wallet hold?\nanswer: 100 ± 1 rupees\nwhy: the restart starts after the committed offset, so the skipped cashback is never paid."}
	b := a
	b.heading, b.text = "A lost commit", "cashback-1 pays, and its commit is lost on the way."
	b.predict = "cashback-1 did nothing wrong. A deploy now restarts it. Once it has caught up, how many rupees does user 42's wallet hold?\nanswer: 150 ± 1 rupees\nwhy: the broker never heard the commit, so promo-1 comes again and the wallet pays it a second time."
	var les []*Lesson
	for i, c := range []recallCase{a, b} {
		l, err := Parse(fmt.Sprintf("%c.md", 'a'+i), []byte(c.lesson(fmt.Sprintf("%c", 'a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		les = append(les, l)
	}
	for _, r := range FindRecall(les) {
		if strings.Contains(r.Text, "asks what") {
			t.Errorf("the same frame after another scene counted as a repeat: %v", r)
		}
	}
}
