package command

// The help command: the list of commands, or one explained.

import "strings"

// Help lists the commands, or explains one.
type Help struct{ Topic string }

func (Help) Name() string { return "help" }
func (c Help) String() string {
	if c.Topic == "" {
		return "help"
	}
	return "help " + c.Topic
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
