package command

import (
	"math"
	"strconv"
	"strings"
)

// Expr is a value, maybe plus or minus a number: epoch(orders/0@n1) + 1.
type Expr struct {
	Value  Value
	Offset float64
}

func (e Expr) String() string {
	switch {
	case e.Offset > 0:
		return e.Value.String() + " + " + formatFloat(e.Offset)
	case e.Offset < 0:
		return e.Value.String() + " - " + formatFloat(-e.Offset)
	}
	return e.Value.String()
}

// Comparison operators.
var ops = []string{"==", "!=", "<", "<=", ">", ">="}

// Condition is VALUE OP VALUE, read from the lab when it is evaluated.
// With a tolerance (VALUE == VALUE ± N) == holds when the two sides are at
// most N apart, and != when they are further: a measured rate is never
// exact.
type Condition struct {
	Left  Expr
	Op    string
	Right Expr
	Tol   float64 // 0: exact
}

func (c Condition) String() string {
	s := c.Left.String() + " " + c.Op + " " + c.Right.String()
	if c.Tol > 0 {
		s += " ± " + formatFloat(c.Tol)
	}
	return s
}

// Eval compares two evaluated sides, within the condition's tolerance.
func (c Condition) Eval(a, b any) bool {
	x, xok := a.(float64)
	y, yok := b.(float64)
	if c.Tol == 0 || !xok || !yok {
		return Holds(c.Op, a, b)
	}
	within := math.Abs(x-y) <= c.Tol
	if c.Op == "!=" {
		return !within
	}
	return within
}

// Holds compares two evaluated sides.
func Holds(op string, a, b any) bool {
	if x, ok := a.(float64); ok {
		y, _ := b.(float64)
		switch op {
		case "==":
			return x == y
		case "!=":
			return x != y
		case "<":
			return x < y
		case "<=":
			return x <= y
		case ">":
			return x > y
		case ">=":
			return x >= y
		}
		return false
	}
	x, _ := a.(string)
	y, _ := b.(string)
	switch op {
	case "==":
		return x == y
	case "!=":
		return x != y
	}
	return false
}

const condHelp = "write VALUE OP VALUE, e.g. epoch(orders/0) == 3 or lost == 0"

// parseCondition reads a condition from toks; the tokens after it are left
// for options.
func (p *parser) parseCondition(verb string) (Condition, *posError) {
	left, err := p.parseExpr(verb, "a value")
	if err != nil {
		return Condition{}, err
	}
	t, ok := p.peek()
	if !ok {
		return Condition{}, errAt(p.end, "%s %s needs a comparison after it (==, !=, <, <=, > or >=); %s", verb, left, condHelp)
	}
	if t.kind != tOp {
		e := errAt(t.col, "expected a comparison (==, !=, <, <=, > or >=) after %s, not %q", left, t.text)
		if t.text == "=" || strings.HasPrefix(t.text, "=") {
			e.suggest = "=="
		}
		return Condition{}, e
	}
	p.pos++
	right, err := p.parseExpr(verb, "a value after "+t.text)
	if err != nil {
		return Condition{}, err
	}
	c := Condition{Left: left, Op: t.text, Right: right}
	c.Left.Value, c.Right.Value = p.savedAgainst(c.Left.Value, c.Right.Value), p.savedAgainst(c.Right.Value, c.Left.Value)
	if err := checkCondition(c, t.col); err != nil {
		return c, err
	}
	if pm, ok := p.peek(); ok && pm.kind == tWord && !pm.quoted && (pm.text == "±" || pm.text == "+-") {
		p.pos++
		tol, err := p.parseTolerance(c, pm)
		if err != nil {
			return Condition{}, err
		}
		c.Tol = tol
	}
	return c, nil
}

// parseTolerance reads the N of VALUE == VALUE ± N.
func (p *parser) parseTolerance(c Condition, pm token) (float64, *posError) {
	if c.Op != "==" && c.Op != "!=" {
		return 0, errAt(pm.col, "± N only follows == or !=, as in lag(billing) == 6000 ± 600; with %s compare with a bound", c.Op)
	}
	if !c.Left.Value.Numeric() {
		return 0, errAt(pm.col, "%s is a word: only numbers take ± N", c.Left)
	}
	n, ok := p.peek()
	f, ferr := 0.0, error(nil)
	if ok && n.kind == tWord && !n.quoted {
		f, ferr = strconv.ParseFloat(n.text, 64)
	}
	if !ok || n.kind != tWord || n.quoted || ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 1e15 {
		col := p.end
		if ok {
			col = n.col
		}
		return 0, errAt(col, "expected a number above zero after %q, as in lag(billing) == 6000 ± 600", pm.text)
	}
	p.pos++
	return f, nil
}

// parseExpr reads VALUE [(+|-) NUMBER].
func (p *parser) parseExpr(verb, what string) (Expr, *posError) {
	t, ok := p.peek()
	if !ok || t.kind != tWord {
		col := p.end
		if ok {
			col = t.col
		}
		return Expr{}, errAt(col, "%s needs %s here; %s", verb, what, condHelp)
	}
	if t.isOption() && !t.quoted {
		e := errAt(t.col, "%q is an option, not a condition; %s", t.text, condHelp)
		if _, isField := fieldSet()[t.key()]; isField {
			e.suggest = t.key() + " == " + t.value()
		}
		return Expr{}, e
	}
	p.pos++
	v, err := parseValue(t)
	if err != nil {
		return Expr{}, err
	}
	e := Expr{Value: v}
	if sign, ok := p.peek(); ok && sign.kind == tWord && !sign.quoted && (sign.text == "+" || sign.text == "-") {
		p.pos++
		n, ok := p.peek()
		f, ferr := 0.0, error(nil)
		if ok && n.kind == tWord {
			f, ferr = strconv.ParseFloat(n.text, 64)
		}
		if !ok || n.kind != tWord || ferr != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e15 {
			col := p.end
			if ok {
				col = n.col
			}
			return Expr{}, errAt(col, "expected a number after %q, as in epoch(orders/0@n1) + 1", sign.text)
		}
		p.pos++
		if p.isSaved(v) {
			v.Kind, e.Value = ValSaved, Value{Kind: ValSaved, Word: v.Word} // before + 1: a number kept earlier
		}
		if !v.Numeric() {
			return Expr{}, errAt(sign.col, "%s is not a number; only numbers take %s", v, sign.text)
		}
		e.Offset = f
		if sign.text == "-" {
			e.Offset = -f
		}
	}
	return e, nil
}

// isSaved says whether v is a word naming a value the lesson keeps.
func (p *parser) isSaved(v Value) bool {
	return p.saved != nil && v.Kind == ValWord && p.saved(v.Word)
}

// savedAgainst reads a kept name compared with a number as that number
// (ValSaved); any other value stays as it is.
func (p *parser) savedAgainst(v, other Value) Value {
	if p.isSaved(v) && other.Numeric() && other.Kind != ValSaved {
		return Value{Kind: ValSaved, Word: v.Word}
	}
	return v
}

// checkCondition rejects conditions that cannot mean anything: two
// constants, a word compared with a number, a word ordered with <.
func checkCondition(c Condition, opCol int) *posError {
	l, r := c.Left.Value, c.Right.Value
	constant := func(v Value) bool { return v.Kind == ValNumber || v.Kind == ValWord }
	if constant(l) && constant(r) {
		e := errAt(opCol, "neither %s nor %s reads the lab; one side must be a lab value like hwm(orders/0) or a checker field like lost", l, r)
		for _, v := range []Value{l, r} {
			if v.Kind == ValWord {
				if s := nearest(v.Word, append(CheckerFields(), funcNames()...)); s != "" {
					e.suggest = s
				}
			}
		}
		return e
	}
	if l.Numeric() != r.Numeric() {
		word, num := l, r
		if l.Numeric() {
			word, num = r, l
		}
		return errAt(opCol, "%s is a word and %s a number; they cannot be compared", word, num)
	}
	if !l.Numeric() && c.Op != "==" && c.Op != "!=" {
		return errAt(opCol, "%s is a word, not a number: compare it with == or !=", l)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quoteWord writes a word value bare only when it reads back as the same
// word: not a number, a checker field, or an arithmetic sign.
func quoteWord(w string) string {
	_, isField := fieldSet()[w]
	_, numErr := strconv.ParseFloat(w, 64)
	if isField || numErr == nil || w == "-" || w == "+" || !nameRe.MatchString(w) {
		return strconv.Quote(w)
	}
	return w
}
