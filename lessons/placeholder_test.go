package lessons

import (
	"context"
	"testing"
)

// A number the lab measured is printed the way the lesson prints its own
// ("36,000"), so a learner can set "36,042" beside it; words, decimals
// and short numbers are left as read.
func TestPlaceholderNumbersGrouped(t *testing.T) {
	for in, want := range map[string]string{
		"36042": "36,042", "9264": "9,264", "1000": "1,000", "999": "999", "0": "0",
		"-27000": "-27,000", "36.18": "36.18", "12345.5": "12,345.5", "1234567": "1,234,567",
		"n2": "n2", "up": "up", "2026-11-29T21:00:00Z": "2026-11-29T21:00:00Z", "1e+06": "1e+06",
		"‹?: nothing kept as lag60›": "‹?: nothing kept as lag60›",
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %q, want %q", in, got, want)
		}
	}
	// Narrative shows the grouped number; the value kept for a condition
	// (lag(billing) == lag60 - 27000) stays as the lab read it.
	r := &Runner{kept: map[string]string{"lag60": "36042"}}
	if got := r.Render(context.Background(), "the line holds {{lag60}} orders"); got != "the line holds 36,042 orders" {
		t.Errorf("rendered %q", got)
	}
	if r.kept["lag60"] != "36042" {
		t.Errorf("the kept value became %q", r.kept["lag60"])
	}
}
