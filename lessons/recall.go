package lessons

import (
	"fmt"
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
		for _, pl := range places {
			for _, w := range words(pl.text) {
				if w == n {
					out = append(out, fmt.Sprintf("the answer %s stands in %s", n, pl.name))
					break
				}
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
