package tui

// The command lines the demo understands: the screen's keys (kill,
// restart, isolate, heal, the clock), check, and its lesson's next, prev
// and predict.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Exec runs the commands the screen's keys send, and a few more.
func (d *DemoSource) Exec(ctx context.Context, line string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.signal()
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", nil
	}
	arg := ""
	if len(f) > 1 {
		arg = f[1]
	}
	switch f[0] {
	case "kill", "restart", "isolate":
		n, err := d.node(arg)
		if err != nil {
			return "", err
		}
		nd := d.nodes[n]
		switch f[0] {
		case "kill":
			if !nd.up {
				return "", fmt.Errorf("%s is already down", nd.id)
			}
			nd.up = false
			d.killSaw = true
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == n {
						r.role = "down"
					}
				}
			}
			d.event(d.now, "node-killed", nd.id+" killed: its memory is gone, its disk stays")
			return nd.id + " is down", nil
		case "restart":
			if nd.up {
				return "", fmt.Errorf("%s is already up", nd.id)
			}
			nd.up = true
			for _, p := range d.parts {
				for _, r := range p.reps {
					if r.node == n {
						r.role = "follower"
					}
				}
			}
			d.restartSaw = true
			d.event(d.now, "node-restarted", nd.id+" restarted from its disk")
			return nd.id + " is up", nil
		default:
			nd.isolated = true
			d.event(d.now, "link-cut", nd.id+" isolated: every link cut")
			return nd.id + " is isolated", nil
		}
	case "heal":
		for _, n := range d.nodes {
			n.isolated = false
		}
		d.event(d.now, "link-healed", "every link restored")
		return "every link restored", nil
	case "pause":
		d.paused = true
		return "lab time stopped", nil
	case "resume":
		d.paused = false
		return "lab time runs", nil
	case "speed":
		v, err := strconv.ParseFloat(strings.TrimSuffix(arg, "x"), 64)
		if err != nil || v <= 0 || v > 100 {
			return "", fmt.Errorf("speed wants a factor like 2x or 0.5x, not %q", arg)
		}
		d.speed = v
		return "lab time runs at " + arg, nil
	case "check":
		d.checkedAt = d.now
		return fmt.Sprintf("lost %d, duplicate_deliveries 0", d.lost), nil
	case "lesson":
		switch arg {
		case "next":
			if d.step >= len(demoSteps) {
				return "", fmt.Errorf("this is the last step")
			}
			d.step++
		case "prev":
			if d.step <= 1 {
				return "", fmt.Errorf("this is the first step")
			}
			d.step--
		default:
			return "", fmt.Errorf("lesson next or lesson prev, not %q", arg)
		}
		d.chosen = -1
		return fmt.Sprintf("step %d: %s", d.step, demoSteps[d.step-1].title), nil
	case "predict":
		if len(arg) != 1 || arg[0] < 'a' || arg[0] > 'c' {
			return "", fmt.Errorf("predict a, b or c")
		}
		d.chosen = int(arg[0] - 'a')
		d.predEpoch = 0
		for _, r := range d.parts[0].reps {
			d.predEpoch = max(d.predEpoch, r.epoch)
		}
		return "noted: " + arg, nil
	case "help":
		return strings.Join([]string{
			"The demo understands:",
			"  kill NODE · restart NODE · isolate NODE · heal",
			"  pause · resume · speed 2x",
			"  check · lesson next · lesson prev · predict a|b|c",
			"The real lab understands every command of the language.",
		}, "\n"), nil
	}
	return "", fmt.Errorf("the demo does not simulate %q (the real lab does); try help", f[0])
}

func (d *DemoSource) node(arg string) (int, error) {
	if strings.HasPrefix(arg, "leader(") && strings.HasSuffix(arg, ")") {
		name := arg[len("leader(") : len(arg)-1]
		for _, p := range d.parts {
			if p.name == name {
				if l := d.leader(p); l != nil {
					return l.node, nil
				}
				return 0, fmt.Errorf("%s has no leader right now", name)
			}
		}
		return 0, fmt.Errorf("no partition %q", name)
	}
	for i, n := range d.nodes {
		if n.id == arg {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no node %q: the nodes are n1, n2 and n3", arg)
}
