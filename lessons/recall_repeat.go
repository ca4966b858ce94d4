package lessons

// Near-duplicate questions: two predictions of the curriculum that ask
// the same rule, whatever their numbers or wording.

import (
	"fmt"
	"strings"
)

// asked is a question as near-duplicates are found: its words and its
// right answer's, numbers masked, so that the same rule asked with other
// numbers is the same question.
type asked struct {
	file     string
	line     int
	question map[string]bool
	answer   map[string]bool
	why      map[string]bool
	numeric  bool
}

func askedOf(file string, p *Predict) asked {
	a := asked{file: file, line: p.Line, question: masked(spellDigits(p.Question)), why: masked(p.Why), numeric: p.Number != nil}
	if p.Number != nil {
		a.answer = masked("# " + p.Number.Unit)
	} else {
		a.answer = masked(rightText(p))
	}
	return a
}

// spellDigits writes a question's spelled-out numbers as digits, so that
// "six workers on four partitions" and "twelve on eight" mask alike.
func spellDigits(text string) string {
	f := strings.Fields(text)
	for i, w := range f {
		if d := numberWords[strings.ToLower(strings.Trim(w, ".,;:?!()"))]; d != "" {
			f[i] = d
		}
	}
	return strings.Join(f, " ")
}

// masked are a text's content words with every number as "#".
func masked(text string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(text) {
		if isNumber(w) {
			w = "#"
		}
		m[w] = true
	}
	return m
}

// alike says whether b asks what a asked: their questions alike and their
// right answers alike, or the two together very alike; or, however the
// scene is told, their reveals explain the answer with the same rule.
func alike(a, b asked) bool {
	q := jaccard(a.question, b.question)
	// One lesson's reveals share its vocabulary (a closed segment, the
	// newest record of a key) from question to question: within a lesson
	// only reveals that are mostly the same make a repeat.
	w := jaccard(a.why, b.why)
	if w >= recallSameWhy || w >= recallSameWhyAsked && q >= recallSameAsked && a.file != b.file {
		return true
	}
	if a.numeric != b.numeric {
		return false
	}
	if a.numeric && q < recallSameNumeric {
		return false
	}
	if q >= recallSameQuestion && jaccard(a.answer, b.answer) >= recallSameAnswer {
		return true
	}
	return jaccard(union(a.question, a.answer), union(b.question, b.answer)) >= recallSameBoth
}

func sameHow(a, b asked) string {
	return fmt.Sprintf("numbers aside: %.0f%% the same words in the question, %.0f%% in the right answer, %.0f%% in the reveal", jaccard(a.question, b.question)*100, jaccard(a.answer, b.answer)*100, jaccard(a.why, b.why)*100)
}

func union(a, b map[string]bool) map[string]bool {
	m := map[string]bool{}
	for w := range a {
		m[w] = true
	}
	for w := range b {
		m[w] = true
	}
	return m
}
