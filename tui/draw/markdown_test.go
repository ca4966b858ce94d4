package draw

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

func mdPlain(src string, w int) string {
	return strings.Join(Markdown(NewStyles(DefaultTheme), src, w), "\n")
}

func TestMarkdown(t *testing.T) {
	for _, c := range []struct {
		name, src string
		w         int
		want      string
	}{
		{"a paragraph wrapped in the file reflows; a number starting a line is not a list",
			"It is the flash sale again, and n1 leads the partition that holds order\n881. The checkout writes **1,500 orders** with `acks=all`.", 40,
			"It is the flash sale again, and n1 leads\nthe partition that holds order 881. The\ncheckout writes 1,500 orders with\n`acks=all`."},
		{"paragraphs keep one blank row between them", "One.\n\n\n\nTwo.", 20, "One.\n\nTwo."},
		{"a list hangs its lines under the bullet",
			"Before:\n- **acks=0** loses messages without a trace: the producer never knows\n- acks=1 loses what it confirmed", 30,
			"Before:\n\n• acks=0 loses messages\n  without a trace: the\n  producer never knows\n• acks=1 loses what it\n  confirmed"},
		{"a table that fits is a grid, numbers to the right",
			"| acks | told \"ok\" | lost |\n|---|---|---|\n| 0 | 0 | 0 |\n| all | 500 | 12 |", 40,
			"acks │ told \"ok\" │ lost\n─────┼───────────┼─────\n0    │         0 │    0\nall  │       500 │   12"},
		{"a table too wide becomes one record a row",
			"| acks | told \"ok\" | in the log after failover | confirmed, then lost |\n|---|---|---|---|\n| 0 | 0 | 412 | 0 |\n| 1 | 500 | 488 | 12 |", 30,
			"acks 0\n  told \"ok\": 0\n  in the log after failover:\n    412\n  confirmed, then lost: 0\n\nacks 1\n  told \"ok\": 500\n  in the log after failover:\n    488\n  confirmed, then lost: 12"},
		{"a fenced block keeps its lines, indented, and breaks long ones at spaces",
			"The dedupe:\n\n```sql\nINSERT INTO processed_messages VALUES (?);\n```", 30,
			"The dedupe:\n\n  INSERT INTO\n      processed_messages\n      VALUES (?);"},
		{"a name or option in code is never split; a line's indent is kept",
			"```sh\nexport AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x\n```\n\n```python\n    sqs = boto3.client(\"sqs\", endpoint_url=\"http://127.0.0.1:19326\",\n```", 40,
			"  export AWS_ACCESS_KEY_ID=x\n      AWS_SECRET_ACCESS_KEY=x\n\n      sqs = boto3.client(\"sqs\",\n  endpoint_url=\"http://127.0.0.1:19326\","},
		{"a word longer than a code row is broken", "```\nabcdefghijklmnopqrstuvwxyz\n```", 12, "  abcdefghij\n      klmnop\n      qrstuv\n      wxyz"},
		{"a word longer than the row is broken", "abcdefghijklmnopqrstuvwxyz", 10, "abcdefghij\nklmnopqrst\nuvwxyz"},
		{"a link shows its text", "See [the chapter](https://example.com/ch1) first.", 40, "See the chapter first."},
	} {
		if got := mdPlain(c.src, c.w); got != c.want {
			t.Errorf("%s:\n--- got\n%s\n--- want\n%s", c.name, got, c.want)
		}
		for _, r := range Markdown(NewStyles(DefaultTheme), c.src, c.w) {
			if w := Width(r); w > c.w {
				t.Errorf("%s: row %q is %d wide, more than %d", c.name, r, w, c.w)
			}
		}
	}
}

// Inline code names something the learner types or reads on screen, such
// as a client called `one`: in colour it takes the accent, and without
// colour (NO_COLOR, a dumb terminal) it keeps its backticks, so that it
// never reads as an ordinary word.
func TestInlineCodeStandsOut(t *testing.T) {
	src := "How many milliseconds does each of `one`'s requests take?"
	for _, c := range []struct {
		profile termenv.Profile
		plain   string // the text without escape codes
	}{
		{termenv.TrueColor, "How many milliseconds does each of one's requests take?"},
		{termenv.ANSI, "How many milliseconds does each of one's requests take?"},
		{termenv.Ascii, "How many milliseconds does each of `one`'s requests take?"},
	} {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(c.profile)
		st := NewStylesFor(DefaultTheme, r)
		rows := Markdown(st, src, 80)
		if len(rows) != 1 {
			t.Fatalf("profile %v: %d rows, want 1: %q", c.profile, len(rows), rows)
		}
		if got := ansi.Strip(rows[0]); got != c.plain {
			t.Errorf("profile %v reads %q, want %q", c.profile, got, c.plain)
		}
		if c.profile != termenv.Ascii && !strings.Contains(rows[0], st.Accent.Render("one")) {
			t.Errorf("profile %v: `one` is not in the accent: %q", c.profile, rows[0])
		}
	}
}
