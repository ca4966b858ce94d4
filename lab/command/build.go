package command

// Builders: each reads its command's arguments and options from the parser
// and checks what one option alone cannot.

func buildBare(c Command) func(*parser, *Spec) (Command, *posError) {
	return func(p *parser, _ *Spec) (Command, *posError) { return c, p.done() }
}
