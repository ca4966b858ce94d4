package lessons

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLesson: parsing never panics; every problem names a line of the
// file; a lesson without problems has an id, a title and steps.
func FuzzParseLesson(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("---\nid: a\ntitle: t\nconcepts: [c]\n---\n## s\n```lab\nkill n1\n```\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("```task\n"))
	for _, dir := range []string{"curriculum", "testdata/broken", "testdata/runner"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		les, err := Parse("fuzz.md", src)
		lines := strings.Count(string(src), "\n") + 1
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error is %T, not Problems: %v", err, err)
			}
			if len(ps) == 0 {
				t.Fatal("an error with no problems")
			}
			for _, p := range ps {
				if p.Line < 1 || p.Line > lines {
					t.Fatalf("problem at line %d of a %d-line file: %s", p.Line, lines, p)
				}
				if p.Msg == "" {
					t.Fatalf("a problem with no message at line %d", p.Line)
				}
			}
			return
		}
		if les.ID == "" || les.Title == "" || len(les.Steps) == 0 || len(les.Concepts) == 0 {
			t.Fatalf("a lesson without problems lacks something: %+v", les)
		}
		for _, r := range FindRecall([]*Lesson{les, les}) { // the recall detector reads any lesson
			if r.Line < 1 || r.Line > lines || r.Text == "" {
				t.Fatalf("a recall warning at line %d of a %d-line file: %q", r.Line, lines, r.Text)
			}
		}
		for _, s := range les.Steps {
			if len(s.Blocks) == 0 {
				t.Fatalf("step %q has no blocks", s.Title)
			}
			for _, b := range s.Blocks {
				if b.Kind == KindPredict && b.Predict.Number == nil && (b.Predict.Answer < 0 || b.Predict.Answer >= len(b.Predict.Choices)) {
					t.Fatalf("prediction answer %d of %d choices", b.Predict.Answer, len(b.Predict.Choices))
				}
				if b.Kind == KindPredict && b.Predict.Number != nil && (len(b.Predict.Choices) > 0 || b.Predict.Number.Tol <= 0) {
					t.Fatalf("a numeric prediction with choices or no tolerance: %+v", b.Predict)
				}
				if b.Kind == KindTask && (len(b.Task.Do) == 0 || len(b.Task.Wait) == 0) {
					t.Fatalf("task without do or wait: %+v", b.Task)
				}
			}
		}
	})
}
