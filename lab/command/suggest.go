package command

import (
	"fmt"
	"strings"
)

// nearest returns the candidate closest to word, or "" when none is close
// enough to be a likely typo. A candidate that word abbreviates (three
// letters or more) counts as close.
func nearest(word string, candidates []string) string {
	w := strings.ToLower(word)
	if len([]rune(w)) < 2 {
		return "" // one character is too little to guess from
	}
	best, bestD := "", -1
	for _, c := range candidates {
		if c == word {
			continue
		}
		d := distance(w, strings.ToLower(c))
		if d == 0 {
			return c // differs only in case
		}
		limit := 2
		if n := len([]rune(w)); n <= 3 {
			limit = 1
		}
		if len(w) >= 3 && strings.HasPrefix(strings.ToLower(c), w) {
			d = 1 // an abbreviation is as good as one typo
		}
		if d > limit {
			continue
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Nearest returns the candidate closest to word, or "" when none is close
// enough to be a likely typo. The lab and the lessons use it for names the
// parser cannot know: topics, clients, lesson ids, front matter keys.
func Nearest(word string, candidates []string) string { return nearest(word, candidates) }

// DidYouMean is `; did you mean "X"?` for the candidate nearest to word,
// or "" when none is close: the tail of an error message.
func DidYouMean(word string, candidates []string) string {
	if s := nearest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// distance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two neighbours each cost one, so
// "kil" → "kill" and "lsot" → "lost" are both one edit.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// quoted puts each word in double quotes.
func quoted(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = `"` + w + `"`
	}
	return out
}

// orList writes "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
