package lessons

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A lesson written to give itself away: Audit names each spoiled question,
// each expectation that held before its step, and the task done before
// the learner acts, and the expectation that fails, at its line; the block that says why it holds before,
// and the step that asks before it shows, pass.
func TestAuditFindsSpoilers(t *testing.T) {
	playsALab(t)
	les, err := Load(filepath.Join("testdata", "audit", "spoiled.md"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := Audit(ctxFor(t, time.Minute), les, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		18: "the answer was on screen when the question was asked: the expect block at line 26",
		26: "every condition held when the step began (leader(orders/0) != n1",
		33: "every condition held when the step began (hwm(orders/0) == 3: 3)",
		46: "the task's goal held before the learner was asked for it (leader(orders/0) != none",
		79: "the expectation did not hold when played: hwm(orders/0) == 7 (hwm(orders/0) is 6)",
	}
	var lines []int
	for _, f := range found {
		lines = append(lines, f.Line)
		if w, ok := want[f.Line]; !ok {
			t.Errorf("unexpected finding %v", f)
		} else if !strings.Contains(f.Text, w) {
			t.Errorf("line %d: %q; want it to say %q", f.Line, f.Text, w)
		}
	}
	for line := range want {
		if !slices.Contains(lines, line) {
			t.Errorf("nothing found at line %d: %s", line, want[line])
		}
	}
}

// holds-before: needs its reason.
func TestHoldsBeforeNeedsAReason(t *testing.T) {
	src := "---\nid: x\ntitle: X\nconcepts: [c]\n---\n\n## One\n\n```lab\ncluster nodes=3\n```\n\n" +
		"```predict\nconcept: c\nQ?\n- [x] a\n- [ ] b\nwhy: w\n```\n\n```expect\nconcept: c\nholds-before:\nlost == 0\n```\n"
	_, err := Parse("x.md", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "holds-before: needs the reason") {
		t.Fatalf("Parse: %v; want a problem saying holds-before: needs its reason", err)
	}
}

// At reading pace the audit names a question whose answer is on screen
// when it is asked, a checker's count (expired, as lost would be) among
// them, an expectation that fails, and a task whose goal is out of reach.
func TestAuditAtReadingPace(t *testing.T) {
	playsALab(t)
	les, err := Load(filepath.Join("testdata", "audit", "reading.md"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := Audit(ctxFor(t, time.Minute), les, Options{Timing: "fast", Reading: 500 * time.Millisecond, taskReach: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "a task could not be done") {
		t.Errorf("Audit: %v; want it to stop at the task out of reach", err)
	}
	want := map[int]string{
		22: "at reading pace the answer was on screen when the question was asked: the expect block at line 30",
		44: "the expect block at line 51 read the same then (expired == 5: 5)",
		64: "the expectation did not hold when played at reading pace: hwm(orders/0) == 7 (hwm(orders/0) is 4)",
		69: "at reading pace the task's goal was not met within 3s of its commands",
	}
	got := map[int]string{}
	for _, f := range found {
		got[f.Line] += f.Text + "\n"
	}
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("line %d: %q; want it to say %q", line, got[line], w)
		}
	}
	for line, text := range got {
		if _, ok := want[line]; !ok {
			t.Errorf("unexpected finding at line %d: %s", line, text)
		}
	}
}

// At reading pace every task is reached and done, also when one follows
// another with only an expect between them: the audit must not wait on
// the second task's goal as though it were the first's.
func TestReadingAuditReachesEveryTask(t *testing.T) {
	playsALab(t)
	les, err := Load(filepath.Join("testdata", "audit", "tasks.md"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := Audit(ctxFor(t, time.Minute), les, Options{Timing: "fast", Reading: 200 * time.Millisecond, taskReach: 3 * time.Second})
	if err != nil {
		t.Errorf("Audit: %v", err)
	}
	for _, f := range found {
		t.Errorf("unexpected finding %v", f)
	}
}
