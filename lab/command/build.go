package command

import "strings"

// Builders: each reads its command's arguments and options from the parser
// and checks what one option alone cannot.

func buildBare(c Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, _ *Spec) (Command, *posError) { return c, p.done() }
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

func buildExpect(p *parser, _ *Spec) (Command, *posError) {
	cond, err := p.parseCondition("expect")
	if err != nil {
		return nil, err
	}
	return Expect{Cond: cond}, p.done()
}

func buildHelp(p *parser, _ *Spec) (Command, *posError) {
	if p.pos >= len(p.toks) {
		return Help{}, nil
	}
	var ws []string
	col := p.toks[p.pos].col
	for ; p.pos < len(p.toks); p.pos++ {
		t := p.toks[p.pos]
		if t.kind != tWord || t.quoted || t.isOption() {
			return nil, errAt(t.col, "help takes a command's name, not %q", t.text)
		}
		ws = append(ws, t.text)
	}
	topic := strings.Join(ws, " ")
	if _, ok := Lookup(topic); !ok {
		return nil, errAt(col, "no command %q; help lists them", topic).withSuggest(nearest(topic, append(specNames(), firstWords()...)))
	}
	return Help{Topic: topic}, nil
}
