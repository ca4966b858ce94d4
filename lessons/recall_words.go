package lessons

// The words the recall detector reads: a text cut into tokens and
// content words, numbers found and folded, and the measures it compares
// them by.

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// tokens are a text's words in order, lower case and folded as words
// folds them but keeping short words, with a currency or percent sign as
// a token of its own, spelled-out numbers as digits, and "" where a
// sentence or clause ends, so that a number's neighbours are the words of
// its own sentence.
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
			} else if d, ok := numberWords[f]; ok {
				f = d
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
	case "s", "sec", "second", "seconds":
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
must shall should what which who whom whose when where why how each every all any some one two three
just also still again yet now before after until while into out up down over under about more most less least very
too much many few same other another own such their they them he she his her we you your i me my our us if because
first last next new old both either neither none nothing get gets got only`))

// words are a text's content words, lower case, with their endings cut,
// and numbers without their thousands commas.
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

// numberOf is a token's value when it is a number.
func numberOf(t string) (float64, error) {
	if !isNumber(t) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(t, 64)
}

// isNumber says whether s is a number written in digits ("1,600",
// "3.1"); "inf" and "nan" are words.
func isNumber(s string) bool {
	if !strings.ContainsAny(s, "0123456789") {
		return false
	}
	_, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return err == nil
}

// stem cuts the endings that make "charged", "charges" and "charging"
// one word, and "retries" and "retry".
func stem(w string) string {
	if len(w) <= 3 || isNumber(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = strings.TrimSuffix(w, "ies") + "y"
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = strings.TrimSuffix(w, "ied") + "y"
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = strings.TrimSuffix(w, "ing")
	case strings.HasSuffix(w, "ed") && len(w) > 4:
		w = strings.TrimSuffix(w, "ed")
	case strings.HasSuffix(w, "es") && len(w) > 4 && !strings.HasSuffix(w, "ses"):
		w = strings.TrimSuffix(w, "s")
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = strings.TrimSuffix(w, "s")
	}
	if strings.HasSuffix(w, "e") && len(w) > 4 {
		w = strings.TrimSuffix(w, "e")
	}
	if f, ok := fold[w]; ok {
		return f
	}
	return w
}

// fold makes one word of words that lessons use for one thing: the
// leader is the node that leads.
var fold = map[string]string{"leader": "lead"}

func set(ws []string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
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
