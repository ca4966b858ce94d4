package lessons

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// A Recall warning names a prediction a learner can answer by recall
// instead of reasoning: the right choice's words stand in the text of its
// step before the question, in the step's heading or in the question
// itself, or another question of the curriculum asks nearly the same.
// A prediction that says recall: REASON is meant to be recalled and is
// left alone.
type Recall struct {
	File string
	Line int
	Text string
}

func (r Recall) String() string { return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Text) }

// recallShare is how much of the right choice's own words (those no wrong
// choice uses) may appear in one place before the choice is given away;
// recallSame is how alike two questions may be before they are one.
const (
	recallShare = 0.5
	recallSame  = 0.7
)

// FindRecall checks the predictions of the lessons given, and each pair of
// them across all those lessons.
func FindRecall(les []*Lesson) []Recall {
	var out []Recall
	type asked struct {
		file  string
		line  int
		words map[string]bool
	}
	var all []asked
	for _, l := range les {
		for _, s := range l.Steps {
			prose := ""
			for _, b := range s.Blocks {
				switch {
				case b.Kind == KindText:
					prose += "\n\n" + b.Text
				case b.Kind == KindPredict && b.Predict != nil:
					p := b.Predict
					all = append(all, asked{l.File, p.Line, set(words(p.Question + " " + rightText(p)))})
					if p.Recall != "" {
						continue
					}
					for _, w := range giveaways(p, prose, s.Title) {
						out = append(out, Recall{l.File, p.Line, w})
					}
				}
			}
		}
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if sim := jaccard(all[i].words, all[j].words); sim >= recallSame {
				out = append(out, Recall{all[j].file, all[j].line, fmt.Sprintf("asks nearly what %s:%d asked (%.0f%% the same words)", all[i].file, all[i].line, sim*100)})
			}
		}
	}
	return out
}

func rightText(p *Predict) string {
	if p.Number != nil {
		return strconv.FormatFloat(p.Number.Value, 'f', -1, 64)
	}
	if p.Answer >= 0 && p.Answer < len(p.Choices) {
		return p.Choices[p.Answer]
	}
	return ""
}

// giveaways says where the right answer already stands.
func giveaways(p *Predict, prose, heading string) []string {
	places := []struct{ name, text string }{
		{"the step's text before it", prose},
		{"the step's heading", heading},
		{"the question itself", p.Question},
	}
	var out []string
	if p.Number != nil {
		n := rightText(p)
		things := counted(p)
		for _, pl := range places {
			if numberStands(pl.text, n, p.Number.Value, things) {
				out = append(out, fmt.Sprintf("the answer %s stands in %s", n, pl.name))
			}
		}
		return out
	}
	wrong := map[string]bool{}
	for i, c := range p.Choices {
		if i != p.Answer {
			for _, w := range words(c) {
				wrong[w] = true
			}
		}
	}
	var own []string
	for w := range set(words(rightText(p))) {
		if !wrong[w] {
			own = append(own, w)
		}
	}
	sort.Strings(own)
	if len(own) == 0 {
		return nil
	}
	for _, pl := range places {
		there := set(words(pl.text))
		var found []string
		for _, w := range own {
			if there[w] {
				found = append(found, w)
			}
		}
		if len(found) >= 2 && float64(len(found)) >= recallShare*float64(len(own)) {
			out = append(out, fmt.Sprintf("the right choice's words %s stand in %s", strings.Join(found, ", "), pl.name))
		}
	}
	return out
}

// recallSmall is where a number stops being small. A small number (a
// count, a rate, an offset) turns up in a lesson for many reasons: acks=1,
// 20 bytes, a worker that finishes 50. It gives the answer away only as a
// quantity of the same thing, with the thing's name beside it; a larger
// one, such as 1,600, rarely stands anywhere by chance.
const recallSmall = 100

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

// numberStands says whether the number n stands in text as the answer:
// anywhere when it is not small or the question names no thing, else
// only with the thing counted just before or after it ("20 writes", "₹50",
// "offset 20").
func numberStands(text, n string, value float64, things map[string]bool) bool {
	ts := tokens(text)
	for i, t := range ts {
		if t != n {
			continue
		}
		if len(things) == 0 || math.Abs(value) >= recallSmall {
			return true
		}
		if i > 0 && things[unitName(ts[i-1])] || i+1 < len(ts) && things[unitName(ts[i+1])] {
			return true
		}
	}
	return false
}

// tokens are a text's words in order, lower case and folded as words
// folds them but keeping short words, with a currency or percent sign as
// a token of its own and "" where a sentence or clause ends, so that a
// number's neighbours are the words of its own sentence.
func tokens(text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		f := cur.String()
		cur.Reset()
		end := strings.HasSuffix(f, ".")
		if f = strings.Trim(f, "-,."); f != "" {
			if isNumber(f) {
				f = strings.ReplaceAll(f, ",", "")
			} else {
				f = stem(strings.NewReplacer(",", "", ".", "").Replace(f))
			}
			out = append(out, f)
		}
		if end {
			out = append(out, "")
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == ',' || r == '.':
			cur.WriteRune(r)
		case r == ';' || r == ':' || r == '!' || r == '?':
			flush()
			out = append(out, "")
		case r == '%' || unicode.Is(unicode.Sc, r):
			flush()
			out = append(out, string(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// unitName folds the ways a lesson writes a unit into one name.
func unitName(w string) string {
	switch w {
	case "s", "sec", "second":
		return "second"
	case "ms", "millisecond":
		return "millisecond"
	case "₹", "rupee":
		return "rupee"
	case "%", "percent":
		return "percent"
	case "b", "byte":
		return "byte"
	}
	return w
}

// stop holds words that carry no answer.
var stop = set(strings.Fields(`a an the and or but of to in on at by for from with as is are was were be been it its it's
this that these those there here then than so no not nor do does did done has have had will would can could may might
must shall should what which who whom whose when where why how each every all any some one two three once twice only
just also still again yet now before after until while into out up down over under about more most less least very
too much many few same other another own such their they them he she his her we you your i me my our us if because
first last next new old both either neither none nothing`))

// words are a text's content words, lower case, with plural and past
// endings cut, and numbers without their thousands commas.
func words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != ',' && r != '.'
	}) {
		f = strings.Trim(f, "-,.")
		if isNumber(f) {
			f = strings.ReplaceAll(f, ",", "")
		} else {
			f = strings.NewReplacer(",", "", ".", "").Replace(f)
		}
		if len(f) < 2 && !isNumber(f) || stop[f] {
			continue
		}
		out = append(out, stem(f))
	}
	return out
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return err == nil
}

func stem(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return strings.TrimSuffix(w, "s")
	}
	return w
}

func set(ws []string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}
