package draw

import (
	"strings"
	"testing"
)

// Numbers the lab read are grouped as the lessons write them; names and
// dates that hold digits are not numbers.
func TestGroupNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"lag(billing) is 36042":                   "lag(billing) is 36,042",
		"produce_rate(hundred) is 9264.5":         "produce_rate(hundred) is 9,264.5",
		"hwm(orders/0) is 1000, leo 1000.":        "hwm(orders/0) is 1,000, leo 1,000.",
		"(-27000)":                                "(-27,000)",
		"lag_seconds(billing) is 36.1875":         "lag_seconds(billing) is 36.1875",
		"hwm(orders/1000@n1) is 999":              "hwm(orders/1000@n1) is 999",
		"n1000 e1234 x-1234 2026-11-29T21:00:00Z": "n1000 e1234 x-1234 2026-11-29T21:00:00Z",
		"1,500 already grouped":                   "1,500 already grouped",
	} {
		if got := GroupNumbers(in); got != want {
			t.Errorf("GroupNumbers(%q) = %q, want %q", in, got, want)
		}
	}
}

// A hyphenated word wraps whole: the lab's message ids (msg-881) and
// words such as at-least-once are one word each.
func TestWrapKeepsHyphenatedWords(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want []string
	}{
		{"the wallet got all three copies of msg-881", 38, []string{"the wallet got all three copies of", "msg-881"}},
		{"the wallet got all three copies of msg-881", 40, []string{"the wallet got all three copies of", "msg-881"}},
		{"at-least-once delivery", 14, []string{"at-least-once", "delivery"}},
		{"a-very-long-hyphenated-name", 10, []string{"a-very-lon", "g-hyphenat", "ed-name"}},
	} {
		got := Wrap(c.s, c.w)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
}
