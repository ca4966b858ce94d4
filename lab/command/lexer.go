package command

import (
	"strconv"
	"unicode"
)

type tokKind int

const (
	tWord tokKind = iota // a word, a quoted string, or key=value
	tOp                  // == != < <= > >=
	tPipe                // |
)

// token is one piece of a line.
type token struct {
	kind   tokKind
	text   string // the word with quotes removed and escapes resolved
	col    int    // 1-based column of its first character
	end    int    // column just past its last character
	eq     int    // byte index in text of the option's '=', or -1
	valCol int    // column of the option's value
	quoted bool   // part of it was written in double quotes
}

// isOption reports whether the token is written key=value.
func (t token) isOption() bool { return t.kind == tWord && t.eq > 0 && validKey(t.text[:t.eq]) }

func (t token) key() string   { return t.text[:t.eq] }
func (t token) value() string { return t.text[t.eq+1:] }

func validKey(k string) bool {
	if k == "" || k[0] < 'a' || k[0] > 'z' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// lex splits one line into tokens. A '#' that starts a token starts a
// comment; inside a word, in quotes or in parentheses it is an ordinary
// character. Parentheses keep what they enclose in one word, spaces and all,
// so rows(orders.outbox, status='pending') is one value.
func lex(line string) ([]token, *posError) {
	rs := []rune(line)
	var toks []token
	i := 0
	for i < len(rs) {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			i++
		case r == '#':
			return toks, nil
		case r == '|':
			toks = append(toks, token{kind: tPipe, text: "|", col: i + 1, end: i + 2, eq: -1})
			i++
		case r == '<' || r == '>' || r == '!' || r == '=' && i+1 < len(rs) && rs[i+1] == '=':
			op := string(r)
			if i+1 < len(rs) && rs[i+1] == '=' {
				op += "="
			}
			if op == "!" {
				return nil, errAt(i+1, "unexpected \"!\"; comparisons are ==, !=, <, <=, > and >=").withSuggest("!=")
			}
			toks = append(toks, token{kind: tOp, text: op, col: i + 1, end: i + 1 + len(op), eq: -1})
			i += len(op)
		default:
			t, next, err := lexWord(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = next
		}
	}
	return toks, nil
}

func lexWord(rs []rune, start int) (token, int, *posError) {
	t := token{kind: tWord, col: start + 1, eq: -1}
	var text []rune
	i := start
scan:
	for i < len(rs) {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '|' || r == '<' || r == '>' || r == '!':
			break scan
		case r == '=' && i+1 < len(rs) && rs[i+1] == '=':
			break scan
		case r == '"':
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if !printable(rs[j]) {
					return t, 0, errAt(j+1, "unexpected character %q", rs[j])
				}
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(rs) {
				return t, 0, errAt(i+1, "missing the closing \" of the text that starts here")
			}
			s, err := strconv.Unquote(string(rs[i : j+1]))
			if err != nil {
				return t, 0, errAt(i+1, "quoted text %s has a bad escape; write \\\" for a quote and \\\\ for a backslash", string(rs[i:j+1]))
			}
			text = append(text, []rune(s)...)
			t.quoted = true
			i = j + 1
		case r == '(':
			j, err := closeParen(rs, i)
			if err != nil {
				return t, 0, err
			}
			text = append(text, rs[i:j+1]...)
			i = j + 1
		case r == ')':
			return t, 0, errAt(i+1, "unexpected \")\" with no \"(\" before it")
		case !printable(r):
			return t, 0, errAt(i+1, "unexpected character %q", r)
		default:
			if r == '=' && t.eq < 0 && !t.quoted {
				t.eq = len(string(text))
				t.valCol = i + 2
			}
			text = append(text, r)
			i++
		}
	}
	t.text = string(text)
	t.end = i + 1
	return t, i, nil
}

// closeParen finds the ')' matching the '(' at open, skipping quoted text.
func closeParen(rs []rune, open int) (int, *posError) {
	depth := 0
	var quote rune
	for j := open; j < len(rs); j++ {
		r := rs[j]
		switch {
		case !printable(r):
			return 0, errAt(j+1, "unexpected character %q", r)
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	if quote != 0 {
		return 0, errAt(open+1, "missing the closing %c inside the parentheses that open here", quote)
	}
	return 0, errAt(open+1, "missing \")\" to close the \"(\" here")
}

// printable rejects control and invisible characters anywhere in a line,
// quoted or not: they cannot be seen on screen, so they can only confuse.
func printable(r rune) bool { return r == '\t' || unicode.IsPrint(r) }
