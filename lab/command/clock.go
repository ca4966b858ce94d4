package command

// The clock commands: how fast lab time runs against the wall clock, and
// stopping and starting it.

import (
	"strconv"
	"strings"
	"time"
)

// Speed sets how fast lab time runs against the wall clock.
type Speed struct{ Factor float64 }

func (Speed) Name() string     { return "speed" }
func (c Speed) String() string { return "speed " + formatFloat(c.Factor) + "x" }

func buildSpeed(p *parser, _ *Spec) (Command, *posError) {
	t, err := p.arg("a factor like 10x")
	if err != nil {
		return nil, err
	}
	num, hasX := strings.CutSuffix(t.text, "x")
	f, ferr := strconv.ParseFloat(num, 64)
	if ferr != nil || !(f >= 0.01 && f <= 1000) {
		return nil, errAt(t.col, "%q is not a speed; write a factor from 0.01x to 1000x, like 10x or 0.5x", t.text)
	}
	if !hasX {
		return nil, errAt(t.col, "write the speed with an x, as in %sx", num).withSuggest(num + "x")
	}
	return Speed{Factor: f}, p.done()
}

// Pause stops lab time, now or after In of lab time; Resume starts it again.
type Pause struct {
	In time.Duration // 0: at once
}

func (Pause) Name() string { return "pause" }
func (c Pause) String() string {
	return words("pause").optIf(c.In != 0, "in", formatDuration(c.In)).String()
}

func buildPause(p *parser, _ *Spec) (Command, *posError) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	return Pause{In: o.dur("in")}, nil
}

// Resume starts lab time again after Pause.
type Resume struct{}

func (Resume) Name() string   { return "resume" }
func (Resume) String() string { return "resume" }
