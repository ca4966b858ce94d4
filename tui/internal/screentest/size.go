package screentest

import (
	"strings"
	"testing"

	"github.com/mqlab/mqlab/tui/draw"
)

// CheckSize fails when a view is not exactly w×h cells.
func CheckSize(t *testing.T, name, view string, w, h int) {
	t.Helper()
	rows := strings.Split(view, "\n")
	if len(rows) != h {
		t.Errorf("%s: %d rows, want %d", name, len(rows), h)
	}
	for i, r := range rows {
		if got := draw.Width(r); got != w {
			t.Errorf("%s: row %d is %d cells wide, want %d: %q", name, i, got, w, r)
		}
	}
}
