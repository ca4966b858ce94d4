package command

import (
	"reflect"
	"strings"
	"testing"
)

// parseCase is a line and the command it must parse to.
type parseCase struct {
	line string
	want Command
}

// parsesTo checks that each line parses to its command and prints back to
// a line that parses to the same command.
func parsesTo(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		got, err := Parse(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.line, got, c.want)
			continue
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%q printed as %q, which parses to %#v (%v)", c.line, got.String(), again, err)
		}
	}
}

// errCase is a line and a part of the error it must be refused with.
type errCase struct{ line, want string }

// refused checks that each line fails to parse with an error containing
// its text.
func refused(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		_, err := Parse(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.line, err, c.want)
		}
	}
}
