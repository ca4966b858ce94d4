package screentest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Updating says whether -update was given: rewrite the goldens from
// the current output. teatest's golden package defines the flag; define it
// here only if it is not there.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Main runs a package's tests with the colours goldens are drawn in.
func Main(m *testing.M) {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden from the current output")
	}
	// Goldens must not depend on the terminal running the tests, or on CI.
	lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetHasDarkBackground(true)
	os.Exit(m.Run())
}

// Golden compares got with the golden file of name, or rewrites it under
// -update. A name is a component's, then what it shows and its size
// ("cluster_dead_78x9"): the file is testdata/cluster/dead_78x9.golden.
func Golden(t *testing.T, name, got string) {
	t.Helper()
	component, rest, _ := strings.Cut(name, "_")
	path := filepath.Join("testdata", component, rest+".golden")
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (rerun with -update if the change is meant):\n--- got\n%s\n--- want\n%s", t.Name(), path, got, want)
	}
}
