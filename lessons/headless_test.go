package lessons

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrap(t *testing.T) {
	text := strings.Repeat("offset 1,500 reached n1 and nobody else; ", 10)
	for _, l := range wrap(text, 70, 76) {
		if n := utf8.RuneCountInString(l); n > 76 {
			t.Errorf("%d characters: %q", n, l)
		}
	}
	if got := wrap("", 10, 10); !slices.Equal(got, []string{""}) {
		t.Errorf("empty: %q", got)
	}
	// A table's rows keep their alignment; each line of a text is its own.
	rows := "id | status  | amount\n1  | pending | 450\n"
	if got := wrap(rows, 40, 40); !slices.Equal(got, []string{"id | status  | amount", "1  | pending | 450"}) {
		t.Errorf("rows: %q", got)
	}
	// A word longer than a line is cut, and nothing is lost.
	word := strings.Repeat("ab", 30)
	got := wrap("key "+word+" end", 20, 25)
	for i, l := range got {
		if n := utf8.RuneCountInString(l); n > 25 || i == 0 && n > 20 {
			t.Errorf("line %d has %d characters: %q", i, n, l)
		}
	}
	if joined := strings.ReplaceAll(strings.Join(got, " "), " ", ""); joined != "key"+word+"end" {
		t.Errorf("cut %q loses text: %q", word, got)
	}
}

func TestMarkdownForATerminal(t *testing.T) {
	var b strings.Builder
	tr := &transcript{w: &b}
	tr.markdown(`A paragraph that goes on and on, long enough that it must be wrapped before it reaches the edge of an 80-column terminal.
A line of the same paragraph ends at epoch
2. Still the same paragraph.

- a bullet that is also long enough to need wrapping before the eightieth column of the terminal
1. a numbered item

| acks | lost |
|---|---|
| all | 0 |

` + "```sql" + `
UPDATE wallets SET balance = balance + 50 WHERE user_id = 42;
` + "```")
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("%d characters: %q", n, l)
		}
	}
	for _, want := range []string{
		"epoch 2. Still the same paragraph.",
		"- a bullet that is also long enough",
		"\n  of the terminal",
		"1. a numbered item",
		"  | acks | lost |\n  |------|------|\n  | all  | 0    |",
		"    UPDATE wallets SET balance = balance + 50 WHERE user_id = 42;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// A run of per-message events that differ only in their numbers is
// written as one line with ranges; a different event starts a new run.
func TestMessageRunsCollapse(t *testing.T) {
	var r messageRun
	for i := 1; i <= 200; i++ {
		if !r.add(fmt.Sprintf("receipts: m%d (shop-%d) sent", i, i)) {
			t.Fatalf("event %d did not join the run", i)
		}
	}
	if r.add("receipts: m1 (shop-1) acked by w1 and deleted") {
		t.Error("an ack joined a run of sends")
	}
	if got, want := r.String(), "receipts: m1–m200 (shop-1–200) sent (200 events)"; got != want {
		t.Errorf("the run reads %q; want %q", got, want)
	}
	var one messageRun
	one.add("receipts: m7 (shop-7) sent")
	if got := one.String(); got != "receipts: m7 (shop-7) sent" {
		t.Errorf("a run of one reads %q", got)
	}
}
