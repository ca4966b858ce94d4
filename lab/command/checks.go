package command

// The checking commands: wait for a condition, expect one, and drain for
// the checker's report.

import (
	"strings"
	"time"
)

// Wait polls a condition until it holds or Timeout (wall clock) passes.
type Wait struct {
	Cond    Condition
	Timeout time.Duration
}

func (Wait) Name() string { return "wait" }
func (c Wait) String() string {
	return words("wait", c.Cond.String()).optIf(c.Timeout != DefaultWaitTimeout, "timeout", formatDuration(c.Timeout)).String()
}

func buildWait(p *parser, _ *Spec) (Command, *posError) {
	cond, err := p.parseCondition("wait")
	if err != nil {
		return nil, err
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	c := Wait{Cond: cond, Timeout: DefaultWaitTimeout}
	if o.has("timeout") {
		c.Timeout = o.dur("timeout")
	}
	return c, nil
}

// Expect checks a condition once.
type Expect struct{ Cond Condition }

func (Expect) Name() string     { return "expect" }
func (c Expect) String() string { return "expect " + c.Cond.String() }

func buildExpect(p *parser, _ *Spec) (Command, *posError) {
	cond, err := p.parseCondition("expect")
	if err != nil {
		return nil, err
	}
	return Expect{Cond: cond}, p.done()
}

// Check drains and prints the checker's report. With Why it also lists
// the records behind Field's count, or behind every count that is not
// zero when Field is "".
type Check struct {
	Why   bool
	Field string
}

func (Check) Name() string { return "check" }
func (c Check) String() string {
	switch {
	case c.Field != "":
		return "check why " + c.Field
	case c.Why:
		return "check why"
	}
	return "check"
}

func buildCheck(p *parser, _ *Spec) (Command, *posError) {
	t, ok := p.peek()
	if !ok {
		return Check{}, nil
	}
	if t.kind != tWord || t.quoted || t.text != "why" {
		return nil, errAt(t.col, "check takes nothing, or why and a count's name, not %q; e.g. check why order_violations", t.text).withSuggest(nearest(t.text, []string{"why"}))
	}
	p.pos++
	t, ok = p.peek()
	if !ok {
		return Check{Why: true}, nil
	}
	if t.kind != tWord || t.quoted || !contains(checkerFields, t.text) {
		return nil, errAt(t.col, "%q is not one of the checker's counts; write one of %s", t.text, strings.Join(checkerFields, ", ")).withSuggest(nearest(t.text, checkerFields))
	}
	p.pos++
	return Check{Why: true, Field: t.text}, p.done()
}
