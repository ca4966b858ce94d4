package command

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Line is one line of a script that holds a command.
type Line struct {
	Num  int    // 1-based
	Text string // as written
	Cmd  Command
}

// Parse reads one command. A blank or comment-only line is an error here;
// ParseLine and ParseScript skip them.
func Parse(text string) (Command, error) {
	c, err := ParseLine(1, text)
	if err == nil && c == nil {
		return nil, &Error{Line: 1, Col: 1, Msg: "expected a command; help lists them"}
	}
	return c, err
}

// ParseLine reads line number num of a script. It returns nil and no error
// for a blank or comment-only line.
func ParseLine(num int, text string) (Command, error) { return ParseLineSaved(num, text, nil) }

// ParseLineSaved is ParseLine for a lesson, which keeps values under names
// ({{epoch(orders/0) as before}}): in a condition, a name for which saved
// reports true, compared with a number or given + N, is such a value
// (ValSaved), as in epoch(orders/0) > before.
func ParseLineSaved(num int, text string, saved func(name string) bool) (Command, error) {
	c, perr := parseLine(text, saved)
	if perr != nil {
		return nil, &Error{Line: num, Col: perr.col, Msg: perr.msg, Suggest: perr.suggest}
	}
	return c, nil
}

// ParseScript reads every line; the error, if any, is an Errors with one
// entry per bad line, so a teacher sees them all at once.
func ParseScript(src string) ([]Line, error) {
	var out []Line
	var errs Errors
	for i, text := range strings.Split(src, "\n") {
		text = strings.TrimSuffix(text, "\r")
		c, err := ParseLine(i+1, text)
		if err != nil {
			errs = append(errs, err.(*Error))
			continue
		}
		if c != nil {
			out = append(out, Line{Num: i + 1, Text: text, Cmd: c})
		}
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

// parser reads one line's tokens.
type parser struct {
	toks []token
	pos  int
	end  int // the column just past the line's last character
	spec *Spec
	// saved reports the names a lesson keeps values under; nil outside one
	saved func(name string) bool
}

func parseLine(text string, saved func(string) bool) (c Command, err *posError) {
	if !utf8.ValidString(text) {
		return nil, errAt(1, "the line is not valid UTF-8 text")
	}
	toks, lerr := lex(text)
	if lerr != nil {
		return nil, lerr
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := &parser{toks: toks, end: toks[len(toks)-1].end, saved: saved}
	spec, serr := p.matchSpec()
	if serr != nil {
		return nil, serr
	}
	p.spec = spec
	return spec.build(p, spec)
}

// matchSpec finds the command whose name the first words spell.
func (p *parser) matchSpec() (*Spec, *posError) {
	first := p.toks[0]
	if first.kind != tWord || first.quoted || first.isOption() {
		return nil, errAt(first.col, "expected a command, not %q; help lists them", first.text)
	}
	var best *Spec
	bestLen, partial := 0, 0
	var partials []*Spec
	for i := range specs {
		s := &specs[i]
		ws := strings.Fields(s.Name)
		if ws[0] != first.text {
			continue
		}
		n := 0
		for n < len(ws) && n < len(p.toks) && p.toks[n].kind == tWord && !p.toks[n].quoted && p.toks[n].text == ws[n] {
			n++
		}
		if n == len(ws) {
			if n > bestLen {
				best, bestLen = s, n
			}
			continue
		}
		if n > partial {
			partial, partials = n, nil
		}
		if n == partial {
			partials = append(partials, s)
		}
	}
	if best != nil {
		p.pos = bestLen
		return best, nil
	}
	if len(partials) == 0 {
		if s := nearest(first.text, firstWords()); s != "" {
			return nil, errAt(first.col, "unknown command %q", first.text).withSuggest(s)
		}
		return nil, errAt(first.col, "unknown command %q; help lists the commands", first.text)
	}
	var want []string
	for _, s := range partials {
		want = append(want, strings.Fields(s.Name)[partial])
	}
	said := strings.Join(strings.Fields(partials[0].Name)[:partial], " ")
	if partial >= len(p.toks) {
		return nil, errAt(p.end, "expected %s after %q", orList(quoted(want)), said)
	}
	t := p.toks[partial]
	return nil, errAt(t.col, "expected %s after %q, not %q", orList(quoted(want)), said, t.text).withSuggest(nearest(t.text, want))
}

func (p *parser) peek() (token, bool) {
	if p.pos >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.pos], true
}

// usageHint ends a message about a missing or wrong argument.
func (p *parser) usageHint() string {
	return "e.g. " + p.spec.Example
}

// arg takes the next positional argument: a word that is not an option.
func (p *parser) arg(what string) (token, *posError) {
	t, ok := p.peek()
	if !ok {
		return token{}, errAt(p.end, "%s needs %s; %s", p.spec.Name, what, p.usageHint())
	}
	if t.kind != tWord || t.isOption() {
		return token{}, errAt(t.col, "%s needs %s before %q; %s", p.spec.Name, what, t.text, p.usageHint())
	}
	p.pos++
	return t, nil
}

// name takes a positional name (a topic, queue, client or group).
func (p *parser) name(what string) (string, *posError) {
	t, err := p.arg(what)
	if err != nil {
		return "", err
	}
	if !nameRe.MatchString(t.text) {
		return "", errAt(t.col, "%q is not a valid %s: use 1–64 letters, digits, '.', '_' or '-'", t.text, what)
	}
	return t.text, nil
}

// oneOf takes a positional word from a fixed list.
func (p *parser) oneOf(what string, list []string) (string, *posError) {
	t, err := p.arg(what)
	if err != nil {
		return "", err
	}
	if !contains(list, t.text) {
		return "", errAt(t.col, "expected %s, not %q", orList(list), t.text).withSuggest(nearest(t.text, list))
	}
	return t.text, nil
}

func (p *parser) nodeRef() (NodeRef, *posError) {
	t, err := p.arg("a node (n1, leader(orders/0) or follower(orders/0))")
	if err != nil {
		return NodeRef{}, err
	}
	return parseNodeRef(t)
}

// keyword takes the word kw, which the command's form puts next. When
// another word stands there, or none, the error is expected with two %s:
// the first for what stands there instead (", not \"n2\"", or nothing at
// the line's end), the second for the usage hint.
func (p *parser) keyword(kw, expected string) *posError {
	t, ok := p.peek()
	if ok && t.kind == tWord && t.text == kw {
		p.pos++
		return nil
	}
	col, got := p.end, ""
	if ok {
		col, got = t.col, ", not "+strconv.Quote(t.text)
	}
	return errAt(col, expected, got, p.usageHint()).withSuggest(keywordSuggest(t.text, kw))
}

// keywordSuggest is the word to suggest where want was expected and got
// written: to and from are easily swapped.
func keywordSuggest(got, want string) string {
	if got == "to" || got == "from" {
		return want
	}
	return nearest(got, []string{want})
}

// done rejects anything left on the line.
func (p *parser) done() *posError {
	if t, ok := p.peek(); ok {
		if p.spec.Args == "" && len(p.spec.Options) == 0 {
			return errAt(t.col, "%s takes nothing after it; got %q", p.spec.Name, t.text)
		}
		return errAt(t.col, "unexpected %q; %s", t.text, p.usageHint())
	}
	return nil
}

// optVal is one option as given.
type optVal struct {
	v   any
	col int
}

type opts map[string]optVal

func (o opts) has(k string) bool { _, ok := o[k]; return ok }

func (o opts) str(k string) string {
	s, _ := o[k].v.(string)
	return s
}

func (o opts) text(k string) (string, bool) {
	v, ok := o[k]
	s, _ := v.v.(string)
	return s, ok
}

func (o opts) int(k string, def int) int {
	if n, ok := o[k].v.(int); ok {
		return n
	}
	return def
}

func (o opts) dur(k string) time.Duration {
	d, _ := o[k].v.(time.Duration)
	return d
}

func (o opts) float(k string) float64 {
	f, _ := o[k].v.(float64)
	return f
}

func (o opts) bool(k string) bool {
	b, _ := o[k].v.(bool)
	return b
}

func optionKeys(list []Option) []string {
	out := make([]string, len(list))
	for i, o := range list {
		out[i] = o.Key
	}
	return out
}

// options reads the rest of the line as key=value options of the command.
// nameThenOptions reads the object a command acts on (what names it for
// the error, e.g. "a topic") and then its key=value options.
func (p *parser) nameThenOptions(what string) (string, opts, *posError) {
	name, err := p.name(what)
	if err != nil {
		return "", nil, err
	}
	o, err := p.options()
	return name, o, err
}

func (p *parser) options() (opts, *posError) {
	o := opts{}
	list := p.spec.Options
	keys := optionKeys(list)
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if !t.isOption() {
			if contains(keys, t.text) {
				return nil, errAt(t.col, "%s needs a value: write %s=…", t.text, t.text)
			}
			if len(list) == 0 {
				return nil, errAt(t.col, "unexpected %q; %s takes no options: %s", t.text, p.spec.Name, p.usageHint())
			}
			return nil, errAt(t.col, "unexpected %q; options are written key=value: %s", t.text, p.usageHint())
		}
		k := t.key()
		var spec *Option
		for i := range list {
			if list[i].Key == k {
				spec = &list[i]
			}
		}
		if spec == nil {
			if len(list) == 0 {
				return nil, errAt(t.col, "%s takes no options; got %q", p.spec.Name, k)
			}
			return nil, errAt(t.col, "%s has no option %q; its options are %s", p.spec.Name, k, strings.Join(keys, ", ")).withSuggest(nearest(k, keys))
		}
		if o.has(k) {
			return nil, errAt(t.col, "%s is given twice", k)
		}
		v, err := spec.parse(t.value())
		if err != nil {
			e := errAt(t.valCol, "%s=%s: %v", k, t.value(), err)
			if ee, ok := err.(*enumError); ok {
				e.suggest = ee.suggest
			}
			return nil, e
		}
		o[k] = optVal{v: v, col: t.col}
	}
	for _, spec := range list {
		if spec.Required && !o.has(spec.Key) {
			return nil, errAt(p.end, "%s needs %s=%s; %s", p.spec.Name, spec.Key, spec.Arg, p.usageHint())
		}
	}
	return o, nil
}
