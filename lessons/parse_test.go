package lessons

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/lab/command"
)

// want is one problem a broken file must report: its line, its column
// (0: any) and words from its message.
type want struct {
	line, col int
	says      string
}

// Every file in testdata/broken, with every problem it must report, in
// line order: a teacher sees them all at once, each at its line.
var broken = map[string][]want{
	"01-no-front-matter.md": {
		{1, 0, "starts with front matter"},
		{1, 0, "a # heading"},
	},
	"02-missing-title.md": {
		{1, 0, "has no title"},
		{3, 0, `concept "acks" is taught without a ` + "```predict or a ```expect"},
	},
	"03-bad-yaml.md": {
		{3, 0, "front matter: found unexpected end of stream"},
	},
	"04-unknown-command.md": {
		{11, 1, `unknown command "kil"; did you mean "kill"?`},
		{12, 21, "acks=2: want 0, 1 or all"},
	},
	"05-bad-condition.md": {
		{21, 15, `expected a comparison`},
		{22, 18, "cannot be compared"},
	},
	"06-predict-no-answer.md": {
		{13, 0, "has no answer: mark the right choice - [x]"},
	},
	"17-numeric-answer.md": {
		{15, 0, "answer: takes a number and how far off is still right"},
		{21, 0, "allows no error at all"},
		{25, 0, "both choices and an answer: line"},
		{36, 0, "a second answer: line"},
	},
	"18-merge-conflict.md": {
		{14, 1, "unresolved merge conflict"},
		{16, 1, "unresolved merge conflict"},
		{18, 1, "unresolved merge conflict"},
	},
	"07-task-no-wait.md": {
		{14, 0, "no wait: condition"},
	},
	"08-unclosed-fence.md": {
		{16, 0, "```lab block opened here is not closed before line 19"},
	},
	"09-unknown-block.md": {
		{4, 0, "without a ```expect block"},
		{21, 4, `unknown block kind "expct"; did you mean "expect"?`},
	},
	"10-unknown-topic.md": {
		{11, 0, `no topic order here; the lesson has created orders; did you mean "orders"?`},
		{12, 0, "orders has partitions 0 to 1, not 2"},
		{23, 0, "no topic order here"},
		{24, 0, "no node n5: the cluster has n1 to n3"},
	},
	"11-concept-untaught.md": {
		{4, 0, `concept "epoch" is taught without a ` + "```predict or a ```expect block (tag one with a line concept: epoch)"},
		{27, 0, `concept "epochs" is not in the front matter's concepts (acks, epoch); did you mean "epoch"?`},
	},
	"12-placeholders.md": {
		{14, 0, "orders has only partition 0, not 9"},
		{14, 0, "{{lost9}}: no earlier placeholder keeps a value as lost9"},
		{15, 0, "{{lost as lost}}: lost is a lab value's name"},
		{15, 0, "a {{ without its }}"},
	},
	"13-text-before-step.md": {
		{7, 0, "text before the first ## step"},
		{9, 0, "a # heading"},
	},
	"14-front-matter-fields.md": {
		{1, 0, "has no title"},
		{2, 0, `id "Front Matter": use lower-case letters`},
		{3, 0, `unknown key "tittle"`},
		{4, 0, `minutes "ten": want a whole number`},
		{8, 0, `step "Empty step" has nothing in it`},
	},
	"15-task-fields.md": {
		{15, 0, "no node n4"},
		{16, 5, "do: is what the learner does; put conditions after wait:"},
		{17, 0, `"wiat:" is not a task key; did you mean "wait:"?`},
		{32, 0, "decide the partition count but names one answer; add an also: line"},
	},
	"16-retry-topic-refs.md": {
		{11, 0, "no topic orders-retyr here; the lesson has created orders"},
		{22, 0, "orders has partitions 0 to 1, not 2"},
		{23, 0, "no topic order here"},
	},
}

func TestBrokenLessonsReportEveryProblemAtItsLine(t *testing.T) {
	files, err := filepath.Glob("testdata/broken/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d broken lessons", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			wants, ok := broken[name]
			if !ok {
				t.Fatalf("%s has no entry in the broken table", name)
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := Check(f, src)
			if len(got) != len(wants) {
				t.Fatalf("got %d problems, want %d:\n%v", len(got), len(wants), got)
			}
			for i, w := range wants {
				p := got[i]
				if p.Line != w.line || (w.col != 0 && p.Col != w.col) || !strings.Contains(p.Msg, w.says) {
					t.Errorf("problem %d: got %s\nwant line %d col %d saying %q", i, p, w.line, w.col, w.says)
				}
				if p.File != f {
					t.Errorf("problem %d names file %q, want %q", i, p.File, f)
				}
			}
		})
	}
}

const example = `---
id: example
title: "An example: one of each block"
summary: Shows the format.
concepts: [acks]
minutes: 5
---

## The first step

Some *narrative*, with a value: {{confirmed}}.

` + "```lab" + `
cluster nodes=3
topic create orders partitions=1   # one partition
elect n1 orders/0
` + "```" + `

` + "```predict" + `
Which node leads?
- [ ] n2
- [x] n1
- [ ] n3
why: elect put it there;
the log ends at {{leo(orders/0)}}.
` + "```" + `

` + "```task" + `
Kill the leader.
It holds everything.
key: select n1 and press k
do: kill leader(orders/0)
wait: leader(orders/0) != n1
wait: leader(orders/0) != none timeout=20s
` + "```" + `

` + "```expect" + `
leader(orders/0) != n1     # someone else leads
lost == 0
` + "```" + `

Text after.

` + "```sql" + `
## not a step: inside a code block
` + "```" + `
`

func TestParseExample(t *testing.T) {
	les, err := Parse("example.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if les.ID != "example" || les.Title != "An example: one of each block" || les.Minutes != 5 ||
		les.Summary != "Shows the format." || !slices.Equal(les.Concepts, []string{"acks"}) {
		t.Errorf("front matter: %+v", les)
	}
	if len(les.Steps) != 1 || les.Steps[0].Title != "The first step" || les.Steps[0].Line != 9 {
		t.Fatalf("steps: %+v", les.Steps)
	}
	var kinds []Kind
	for _, b := range les.Steps[0].Blocks {
		kinds = append(kinds, b.Kind)
	}
	wantKinds := []Kind{KindText, KindLab, KindPredict, KindTask, KindExpect, KindText}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("kinds %v, want %v", kinds, wantKinds)
	}
	b := les.Steps[0].Blocks
	if b[0].Line != 11 || !strings.Contains(b[0].Text, "{{confirmed}}") {
		t.Errorf("text block: %+v", b[0])
	}
	if len(b[1].Commands) != 3 || b[1].Commands[1].Num != 15 {
		t.Errorf("lab block: %+v", b[1].Commands)
	}
	p := b[2].Predict
	if p.ID != "s1.p1" || p.Question != "Which node leads?" || len(p.Choices) != 3 || p.Answer != 1 ||
		p.Why != "elect put it there;\nthe log ends at {{leo(orders/0)}}." {
		t.Errorf("predict: %+v", p)
	}
	task := b[3].Task
	if task.Text != "Kill the leader.\nIt holds everything." || task.Key != "select n1 and press k" ||
		len(task.Do) != 1 || len(task.Wait) != 2 {
		t.Fatalf("task: %+v", task)
	}
	if _, ok := task.Do[0].Cmd.(command.Kill); !ok || task.Do[0].Num != 32 {
		t.Errorf("do: %+v", task.Do[0])
	}
	if w := task.Wait[1].Cmd.(command.Wait); w.Timeout.Seconds() != 20 {
		t.Errorf("wait timeout %v", w.Timeout)
	}
	if h := task.Hint(); h != "key: select n1 and press k · or type: kill leader(orders/0)" {
		t.Errorf("hint %q", h)
	}
	ex := b[4].Expects
	if len(ex) != 2 || ex[0].Text != "leader(orders/0) != n1" || ex[0].Label != "someone else leads" || ex[1].Label != "" {
		t.Errorf("expects: %+v", ex)
	}
	if !strings.Contains(b[5].Text, "## not a step") {
		t.Errorf("a heading inside a code block must stay narrative: %q", b[5].Text)
	}
}

func TestSplitLabel(t *testing.T) {
	for _, c := range []struct{ in, cond, label string }{
		{"lost == 1  # the write is gone", "lost == 1", "the write is gone"},
		{"lost == 1", "lost == 1", ""},
		{`state("a#b") == up # quoted`, `state("a#b") == up`, "quoted"},
		{"rows(orders.outbox, id#2) == 1", "rows(orders.outbox, id#2) == 1", ""},
		{"lost==1#x", "lost==1#x", ""},
	} {
		cond, label := splitLabel(c.in)
		if cond != c.cond || label != c.label {
			t.Errorf("splitLabel(%q) = %q, %q; want %q, %q", c.in, cond, label, c.cond, c.label)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	phs, errs := placeholders("a {{hwm(orders/0) - 1}} b {{lost as lost1}} c {{lost1}} d {{ }} e {{hwm(orders/0) == 1}} f {{x as lost}}")
	if len(phs) != 6 {
		t.Fatalf("got %d placeholders", len(phs))
	}
	if errs[0] != nil || phs[0].expr.Offset != -1 || phs[0].expr.Value.Func != "hwm" {
		t.Errorf("0: %+v %v", phs[0], errs[0])
	}
	if errs[1] != nil || phs[1].as != "lost1" || phs[1].expr.Value.Word != "lost" {
		t.Errorf("1: %+v %v", phs[1], errs[1])
	}
	if errs[2] != nil || phs[2].recall != "lost1" {
		t.Errorf("2: %+v %v", phs[2], errs[2])
	}
	for _, i := range []int{3, 4, 5} {
		if errs[i] == nil {
			t.Errorf("%d: %q should not parse", i, phs[i].src)
		}
	}
}

// Every lab cluster starts with __consumer_offsets: a lesson may read its
// partition without creating it, but not a partition it does not have.
func TestInternalTopicIsKnown(t *testing.T) {
	src := strings.Replace(example, "```expect\n", "```expect\nhwm(__consumer_offsets/0) >= 0\n", 1)
	if src == example {
		t.Fatal("the example has no expect block to add to")
	}
	if _, err := Parse("offsets.md", []byte(src)); err != nil {
		t.Errorf("__consumer_offsets/0: %v", err)
	}
	src = strings.Replace(src, "__consumer_offsets/0", "__consumer_offsets/1", 1)
	if _, err := Parse("offsets.md", []byte(src)); err == nil || !strings.Contains(err.Error(), "__consumer_offsets has only partition 0, not 1") {
		t.Errorf("__consumer_offsets/1: %v", err)
	}
}
