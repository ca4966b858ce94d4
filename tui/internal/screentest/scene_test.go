package screentest

import (
	"compress/gzip"
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

var recordScene = flag.Bool("record", false, "record testdata/scene.jsonl.gz again from testdata/scene.mqlab on a real lab")

// TestRecordScene records the scene; without -record there is nothing
// for it to do.
func TestRecordScene(t *testing.T) {
	if !*recordScene {
		t.Skip("records the scene only with -record")
	}
	src, err := os.ReadFile(Script())
	if err != nil {
		t.Fatal(err)
	}
	lines, err := command.ParseScript(string(src))
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.New(lab.Options{Timing: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := os.Create(Recording())
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	rec := lab.NewRecorder(l, zw)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	failed := l.RunScript(ctx, lines, nil)
	for _, err := range []error{lab.ScriptError(failed), rec.Close(), zw.Close(), f.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
}
