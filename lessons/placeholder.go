package lessons

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/command"
)

// A placeholder puts a value the lab measured into narrative:
//
//	{{hwm(orders/0)}}            the value now, when the paragraph is shown
//	{{hwm(orders/0) - 1}}        a lab value plus or minus a number
//	{{lost as lost_acks1}}       the value now, also kept under a name
//	{{lost_acks1}}               a value kept earlier in the lesson
//
// Values are those of the command language's conditions: leader(P),
// epoch(P), hwm(P), leo(P), logstart(P), P@n1 forms, state(X) and the
// checker's fields (lost, confirmed, …).
type placeholder struct {
	start, end int    // byte offsets of {{ and just past }} in the text
	src        string // between the braces
	expr       command.Expr
	recall     string // a name kept earlier; expr unset
	as         string // keep the value under this name
}

var placeholderRE = regexp.MustCompile(`\{\{([^{}\n]*)\}\}`)

var nameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// placeholders finds the placeholders of a text and parses each; errs has
// one entry per placeholder that does not parse, at the same index.
func placeholders(text string) ([]placeholder, []error) {
	var out []placeholder
	var errs []error
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(text, -1) {
		ph := placeholder{start: m[0], end: m[1], src: text[m[2]:m[3]]}
		err := ph.parse()
		out = append(out, ph)
		errs = append(errs, err)
	}
	return out, errs
}

func (ph *placeholder) parse() error {
	s := strings.TrimSpace(ph.src)
	if i := strings.LastIndex(s, " as "); i >= 0 {
		name := strings.TrimSpace(s[i+4:])
		if !nameRE.MatchString(name) {
			return fmt.Errorf("{{%s}}: keep a value under a name of lower-case letters, digits and _, like {{lost as lost_acks1}}", ph.src)
		}
		if reserved(name) {
			return fmt.Errorf("{{%s}}: %s is a lab value's name; keep it under another", ph.src, name)
		}
		ph.as = name
		s = strings.TrimSpace(s[:i])
	}
	if s == "" {
		return fmt.Errorf("{{%s}}: name a lab value, like {{hwm(orders/0)}}", ph.src)
	}
	if nameRE.MatchString(s) && !reserved(s) {
		if ph.as != "" {
			return fmt.Errorf("{{%s}}: %s is not a lab value, so there is nothing to keep", ph.src, s)
		}
		ph.recall = s
		return nil
	}
	c, err := command.ParseLine(1, "expect "+s+" == "+s)
	if err != nil {
		var ce *command.Error
		if errors.As(err, &ce) {
			msg := ce.Msg
			if ce.Suggest != "" {
				msg += fmt.Sprintf("; did you mean %q?", ce.Suggest)
			}
			return fmt.Errorf("{{%s}}: %s", ph.src, msg)
		}
		return fmt.Errorf("{{%s}}: %v", ph.src, err)
	}
	e, ok := c.(command.Expect)
	if !ok {
		return fmt.Errorf("{{%s}}: not a lab value", ph.src)
	}
	if k := e.Cond.Left.Value.Kind; k != command.ValLab && k != command.ValField {
		return fmt.Errorf("{{%s}}: not a lab value; try hwm(orders/0) or lost", ph.src)
	}
	ph.expr = e.Cond.Left
	return nil
}

// reserved reports whether a bare word means a lab value already: a
// checker field, or a word a condition reads.
func reserved(name string) bool {
	return slices.Contains(checker.Fields(), name)
}

var plainNumberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// shown is a lab value as narrative prints it: a number with its
// thousands grouped, the way the lesson writes its own ("36,042 orders,
// 60 × 600 = 36,000"), anything else as the lab read it. A value kept for
// a condition (lag60) stays as read, so that the condition parses it.
func shown(v string) string {
	if !plainNumberRE.MatchString(v) {
		return v
	}
	sign, whole, frac := "", v, ""
	if whole[0] == '-' {
		sign, whole = "-", whole[1:]
	}
	if i := strings.IndexByte(whole, '.'); i >= 0 {
		whole, frac = whole[:i], whole[i:]
	}
	if len(whole) < 4 {
		return v
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(whole[i])
	}
	b.WriteString(frac)
	return b.String()
}
