package lessons

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// A Recall warning names a prediction a learner can answer by recall
// instead of reasoning: the right choice's words, or the number asked for,
// already stand in what the learner has read by then (the question
// itself, the paragraph just before it, its step's heading, the lesson's
// summary shown as the lesson opens, the earlier steps and their
// reveals); or a numeric answer is one sum, difference, product or
// quotient of two numbers given just before; or another question of the
// curriculum asks the same with other numbers. A prediction that says
// recall: REASON is meant to be recalled: it is still named when it
// repeats an earlier question, but not for what its page gives away.
type Recall struct {
	File string
	Line int
	Text string
}

func (r Recall) String() string { return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Text) }

// A place is text the learner has read before a question, and how loudly
// it speaks: the question, the paragraph just before it, its step's
// heading and the lesson's summary are in front of them; the rest of the
// step less so; earlier steps, their headings and reveals least.
type place struct {
	name   string
	weight float64
	text   string
}

const (
	loud   = 1.0
	near   = 0.7
	faint  = 0.45
	remote = 0.35
)

// recallScore is how much of the right choice's own words, weighed by
// where they stand and how rare they are in the lessons, may be on the
// page before the choice is given away; recallLead is how far ahead of
// every wrong choice it must be, so that a text that names all the
// choices gives nothing away. On the curriculum they were set against,
// questions that apply a rule to a new situation score under 0.4, and
// those a teacher found answered on the page mostly score 0.45 or more.
const (
	recallScore = 0.4
	recallLead  = 0.1
)

// recallSame is how alike two questions (numbers masked) and their right
// answers may be before they are one question asked twice.
const (
	recallSameQuestion = 0.5
	recallSameAnswer   = 0.5
	recallSameBoth     = 0.6
	// A numeric question's frame ("how many rupees does the wallet
	// hold?") is an instrument a lesson reads again after each new scene:
	// with its numbers masked, two such questions are one only when the
	// frame is all but the same, or the reveals share their rule.
	recallSameNumeric = 0.8
)

// Two reveals of the same rule share words however differently the scene
// is told; among the curriculum's reveals, one pair in a hundred shares a
// fifth of its words, one in a thousand a third.
const (
	recallSameWhy      = 0.4
	recallSameWhyAsked = 0.3
	recallSameAsked    = 0.2
)

// FindRecall checks the predictions of the lessons given, and each pair of
// them across all those lessons, in the order given.
func FindRecall(les []*Lesson) []Recall {
	rare := rarity(les)
	var out []Recall
	var all []asked
	for _, l := range les {
		var earlierText, earlierHeads, reveals []string
		for _, s := range l.Steps {
			var stepText []string
			for _, b := range s.Blocks {
				switch {
				case b.Kind == KindText:
					stepText = append(stepText, b.Text)
				case b.Kind == KindTask && b.Task != nil:
					stepText = append(stepText, b.Task.Text)
				case b.Kind == KindPredict && b.Predict != nil:
					p := b.Predict
					all = append(all, askedOf(l.File, p))
					if p.Recall == "" {
						just, rest := lastParagraph(stepText)
						places := []place{
							{"the question itself", loud, p.Question},
							{"the paragraph just before it", loud, just},
							{"the step's heading", loud, s.Title},
							{"the lesson's summary", loud, l.Summary},
							{"the step's text before it", near, rest},
							{"an earlier step's heading", near, strings.Join(earlierHeads, "\n\n")},
							{"an earlier reveal", faint, strings.Join(reveals, "\n\n")},
							{"an earlier step", remote, strings.Join(earlierText, "\n\n")},
						}
						for _, w := range giveaways(p, places, just, rare) {
							out = append(out, Recall{l.File, p.Line, w})
						}
					}
					reveals = append(reveals, p.Why)
				}
			}
			earlierText = append(earlierText, stepText...)
			earlierHeads = append(earlierHeads, s.Title)
		}
	}
	for i := range all {
		for j := 0; j < i; j++ {
			if alike(all[j], all[i]) {
				out = append(out, Recall{all[i].file, all[i].line, fmt.Sprintf("asks what %s:%d asked, %s", all[j].file, all[j].line, sameHow(all[j], all[i]))})
				break
			}
		}
	}
	// In the order of the files given, then of their lines.
	order := map[string]int{}
	for i, l := range les {
		if _, ok := order[l.File]; !ok {
			order[l.File] = i
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := order[out[i].File], order[out[j].File]; a != b {
			return a < b
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// lastParagraph splits the text read so far in a step into its last
// paragraph (with the one before it when it is only a line) and the rest.
func lastParagraph(texts []string) (just, rest string) {
	var paras []string
	for _, t := range texts {
		for _, p := range strings.Split(t, "\n\n") {
			if strings.TrimSpace(p) != "" {
				paras = append(paras, p)
			}
		}
	}
	if len(paras) == 0 {
		return "", ""
	}
	n := 1
	if len(words(paras[len(paras)-1])) < 8 && len(paras) > 1 {
		n = 2
	}
	cut := len(paras) - n
	return strings.Join(paras[cut:], "\n\n"), strings.Join(paras[:cut], "\n\n")
}

func rightText(p *Predict) string {
	if p.Number != nil {
		return FormatNumber(p.Number.Value)
	}
	if p.Answer >= 0 && p.Answer < len(p.Choices) {
		return p.Choices[p.Answer]
	}
	return ""
}

// giveaways says where the right answer already stands.
func giveaways(p *Predict, places []place, just string, rare map[string]float64) []string {
	if p.Number != nil {
		return numberGiveaways(p, places, just)
	}
	if p.Answer < 0 || p.Answer >= len(p.Choices) {
		return nil
	}
	var sets []map[string]bool
	for _, c := range p.Choices {
		sets = append(sets, set(words(c)))
	}
	seen := make([]map[string]bool, len(places))
	for i, pl := range places {
		seen[i] = set(words(pl.text))
	}
	right, where := choiceScore(p.Answer, sets, places, seen, rare)
	if right < recallScore || len(where) == 0 {
		return nil
	}
	if len(where) == 1 && len(ownWords(p.Answer, sets)) > 1 {
		// One word of several gives the choice away only where the
		// learner has just read it.
		for _, pl := range where {
			if placeWeight(places, pl) < loud {
				return nil
			}
		}
	}
	best := 0.0
	for i := range p.Choices {
		if i == p.Answer {
			continue
		}
		// A question sets its scene in words its wrong choices borrow: a
		// wrong choice is weighed by the rest of the page alone.
		wrong, _ := choiceScore(i, sets, places[1:], seen[1:], rare)
		if right-wrong < recallLead {
			return nil
		}
		best = math.Max(best, wrong)
	}
	// Name the words, as the choice writes them, by the loudest place
	// each stands in.
	spelled := map[string]string{}
	for _, f := range strings.FieldsFunc(strings.ToLower(rightText(p)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	}) {
		if ws := words(f); len(ws) == 1 && spelled[ws[0]] == "" {
			spelled[ws[0]] = f
		}
	}
	byPlace := map[string][]string{}
	var order []string
	for _, w := range sortedKeys(where) {
		pl := where[w]
		if byPlace[pl] == nil {
			order = append(order, pl)
		}
		if spelled[w] != "" {
			w = spelled[w]
		}
		byPlace[pl] = append(byPlace[pl], "“"+w+"”")
	}
	sort.SliceStable(order, func(a, b int) bool { return placeRank(places, order[a]) < placeRank(places, order[b]) })
	var parts []string
	for _, pl := range order {
		parts = append(parts, strings.Join(byPlace[pl], ", ")+" in "+pl)
	}
	return []string{fmt.Sprintf("the right choice's own words stand on the page before the question (%.0f%% of their weight, the wrong choices' at most %.0f%%): %s", right*100, best*100, strings.Join(parts, "; "))}
}

func placeWeight(places []place, name string) float64 {
	for _, p := range places {
		if p.name == name {
			return p.weight
		}
	}
	return 0
}

func placeRank(places []place, name string) int {
	for i, p := range places {
		if p.name == name {
			return i
		}
	}
	return len(places)
}

// ownWords are the words of choice i that no other choice uses.
func ownWords(i int, sets []map[string]bool) []string {
	var own []string
	for w := range sets[i] {
		mine := true
		for j, s := range sets {
			if j != i && s[w] {
				mine = false
				break
			}
		}
		if mine {
			own = append(own, w)
		}
	}
	sort.Strings(own)
	return own
}

// choiceScore is the share of choice i's own words, each weighed by its
// rarity, that stand in the places, each word counted at the loudest
// place it stands in; where names that place for each word found.
func choiceScore(i int, sets []map[string]bool, places []place, seen []map[string]bool, rare map[string]float64) (float64, map[string]string) {
	own := ownWords(i, sets)
	where := map[string]string{}
	var got, total float64
	for _, w := range own {
		r := rare[w]
		if r == 0 {
			r = 1
		}
		total += r
		for k, pl := range places {
			if seen[k][w] {
				got += r * pl.weight
				where[w] = pl.name
				break // places run loudest first
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	return got / total, where
}

// rarity weighs each word by how few steps use it, among the lessons
// given and the curriculum's (so that how rare a word is does not depend
// on how many files are checked at once): a word in every step ("order",
// "worker") says little about which choice is right; one in a few says
// much. Weights run from 0.2 to 1.
func rarity(les []*Lesson) map[string]float64 {
	base := curriculumCounts()
	df := map[string]int{}
	n := base.steps
	for _, l := range les {
		if base.ids[l.ID] {
			continue // counted with the curriculum
		}
		n += countSteps(l, df)
	}
	out := map[string]float64{}
	if n < 8 {
		return out // too few steps to tell a common word from a rare one
	}
	weigh := func(w string, d int) {
		out[w] = math.Max(0.2, math.Min(1, math.Log(float64(n)/float64(d))/math.Log(float64(n)/2)))
	}
	for w, d := range base.df {
		weigh(w, d+df[w])
	}
	for w, d := range df {
		if base.df[w] == 0 {
			weigh(w, d)
		}
	}
	return out
}

// wordCounts are how many steps use each word, over some lessons.
type wordCounts struct {
	ids   map[string]bool
	steps int
	df    map[string]int
}

// curriculumCounts are the curriculum's word counts, counted once.
var curriculumCounts = sync.OnceValue(func() wordCounts {
	c := wordCounts{ids: map[string]bool{}, df: map[string]int{}}
	all, err := Curriculum()
	if err != nil {
		return c
	}
	for _, l := range all {
		c.ids[l.ID] = true
		c.steps += countSteps(l, c.df)
	}
	return c
})

// countSteps adds to df, for each word, the steps of l that use it, and
// says how many steps l has.
func countSteps(l *Lesson, df map[string]int) int {
	for _, s := range l.Steps {
		var text []string
		for _, b := range s.Blocks {
			switch {
			case b.Kind == KindText:
				text = append(text, b.Text)
			case b.Kind == KindPredict && b.Predict != nil:
				text = append(text, b.Predict.Question, b.Predict.Why)
			}
		}
		for w := range set(words(strings.Join(text, " "))) {
			df[w]++
		}
	}
	return len(l.Steps)
}

// recallSmall is where a number stops being small. A small number (a
// count, a rate, an offset) turns up in a lesson for many reasons: acks=1,
// 20 bytes, a worker that finishes 50. It gives the answer away only as a
// quantity of the same thing, with the thing's name beside it; a larger
// one, such as 1,600, rarely stands anywhere by chance.
const recallSmall = 100

// numberGiveaways says where a numeric answer stands, or which two numbers
// of the paragraph just before the question make it in one step.
func numberGiveaways(p *Predict, places []place, just string) []string {
	n := rightText(p)
	things := counted(p)
	asks := set(words(p.Question))
	for _, pl := range places {
		if pl.weight < near && math.Abs(p.Number.Value) < recallSmall {
			continue // a small number far back is a coincidence
		}
		if pl.weight <= remote {
			// An earlier scene's outcome (₹100 in the wallet, 20 a
			// second) comes round again in a lesson that varies one
			// thing at a time; far back, the same number is the
			// lesson's instrument, not its answer.
			continue
		}
		// A count under ten stands in every paragraph: beside the thing
		// the question counts, and among the question's own words, it is
		// the same count of the same thing.
		var also map[string]bool
		if math.Abs(p.Number.Value) < 10 && pl.name != "the question itself" && pl.name != "the step's heading" {
			also = asks
		}
		num := p.Number
		if pl.weight <= faint {
			// Far back only the very number counts: within a wide
			// tolerance some earlier figure always falls.
			exact := *num
			exact.Tol, exact.Percent = 0, false
			num = &exact
		}
		if numberStands(pl.text, num, things, also) {
			return []string{fmt.Sprintf("the answer %s stands in %s", n, pl.name)}
		}
	}
	if how := oneStep(p.Number, quantities(just)); how != "" {
		return []string{fmt.Sprintf("the answer %s is %s, both given in the paragraph just before it: one step of arithmetic", n, how)}
	}
	return nil
}

// close says whether x is the answer, within its tolerance.
func (n *Number) close(x float64) bool {
	tol := n.Tol
	if n.Percent {
		tol = math.Abs(n.Value) * n.Tol / 100
	}
	return math.Abs(x-n.Value) <= tol+1e-9*math.Max(1, math.Abs(n.Value))
}

// oneStep finds two numbers whose sum, difference, product or quotient is
// exactly the answer, and says which. A small result falls out of any
// two numbers of a paragraph by chance, so the answer must be 10 or
// more, a quotient 100 or more; a number that is the answer by itself,
// or 0 or 1, makes no step.
func oneStep(n *Number, nums []float64) string {
	v := n.Value
	if math.Abs(v) < 10 {
		return ""
	}
	exact := func(x float64) bool { return math.Abs(x-v) <= 1e-9*math.Abs(v) }
	var use []float64
	seen := map[float64]bool{}
	for _, x := range nums {
		if x == 0 || x == 1 || exact(x) || seen[x] {
			continue
		}
		seen[x] = true
		use = append(use, x)
	}
	f := FormatNumber
	for i, a := range use {
		for j, b := range use {
			switch {
			case i == j:
			case i < j && exact(a+b):
				return f(a) + " + " + f(b)
			case a > b && exact(a-b):
				return f(a) + " − " + f(b)
			case i < j && exact(a*b):
				return f(a) + " × " + f(b)
			case math.Abs(v) >= 100 && exact(a/b):
				return f(a) + " ÷ " + f(b)
			}
		}
	}
	return ""
}

// names are words that a number after them names rather than counts:
// order 881, seller 7, offset 20, n3.
var names = set(strings.Fields("order seller user receipt payment partition offset epoch node msg key step lesson version charg"))

// quantities are the numbers written in text, in digits or as words,
// leaving out those that name a thing (order 881).
func quantities(text string) []float64 {
	var out []float64
	ts := tokens(text)
	for i, t := range ts {
		v, err := numberOf(t)
		if err != nil || i > 0 && names[ts[i-1]] {
			continue
		}
		out = append(out, v)
	}
	return out
}

// counted is what a numeric answer counts: its unit ("s", "a second",
// "deliveries") and the word after the question's "how many", "how much",
// "which" or "what" ("How many payments…", "At which offset…"), each as
// unitName folds it. It is empty when neither names a thing.
func counted(p *Predict) map[string]bool {
	things := map[string]bool{}
	for _, t := range tokens(p.Number.Unit) {
		if t != "" && !stop[t] {
			things[unitName(t)] = true
		}
	}
	q := tokens(p.Question)
	for i, t := range q {
		next := i + 1
		if t == "how" && next < len(q) && (q[next] == "many" || q[next] == "much") {
			next++
		} else if t != "which" && t != "what" {
			continue
		}
		if next < len(q) && q[next] != "" && !stop[q[next]] && !isNumber(q[next]) {
			things[unitName(q[next])] = true
		}
	}
	return things
}

// numberStands says whether the answer stands in text: anywhere when it
// is not small or the question names no thing, else only with the thing
// counted just before or after it ("20 writes", "₹50", "offset 20"); and
// when also is given, with one of its words within five words of it.
func numberStands(text string, n *Number, things, also map[string]bool) bool {
	ts := tokens(text)
	for i, t := range ts {
		v, err := numberOf(t)
		if err != nil || !n.close(v) || i > 0 && names[ts[i-1]] && !things[ts[i-1]] {
			continue // order 881 is no count, unless orders are what is asked
		}
		if also != nil && !nearby(ts, i, 5, also, things) {
			continue
		}
		if len(things) == 0 || math.Abs(n.Value) >= recallSmall {
			return true
		}
		if beside(ts, i, -1, things) || beside(ts, i, 1, things) {
			return true
		}
	}
	return false
}

// beside says whether the first word from ts[i] in direction dir that is
// not a stop word ("five more orders", "₹50", "offset 20") is one of the
// things, in ts[i]'s sentence.
func beside(ts []string, i, dir int, things map[string]bool) bool {
	for j := i + dir; j >= 0 && j < len(ts) && ts[j] != ""; j += dir {
		if things[unitName(ts[j])] {
			return true
		}
		if !stop[ts[j]] {
			return false
		}
	}
	return false
}

// nearby says whether a word of want, other than the things counted,
// stands within span words of ts[i], in its sentence.
func nearby(ts []string, i, span int, want, things map[string]bool) bool {
	for _, dir := range []int{-1, 1} {
		for k := 1; k <= span; k++ {
			j := i + dir*k
			if j < 0 || j >= len(ts) || ts[j] == "" {
				break
			}
			if want[ts[j]] && !things[unitName(ts[j])] && !stop[ts[j]] {
				return true
			}
		}
	}
	return false
}

// numberWords are the numbers a lesson spells out. "one" is left out: it
// is as often a pronoun as a count.
var numberWords = map[string]string{
	"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
	"ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
	"hundred": "100", "twice": "2", "double": "2", "half": "0.5",
}
