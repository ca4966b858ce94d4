package lessons

// A task as the player follows it: what the learner ran and whether the
// task asks for it, which of its conditions still waits, with the values
// the lab shows, and when it waits on a node that is down.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
)

// noteLearner remembers a command the learner ran during the step and,
// while a task waits, says so when it is not what the task asks for: the
// lab may no longer get where the task waits for it to go. Commands that
// change nothing (the command table's read-only and clock commands) are
// not noted.
func (p *Player) noteLearner(ctx context.Context, cmd command.Command) {
	p.note(ctx, cmd, "ran")
}

// note is noteLearner for a command the learner ran, or chose for a
// decision to run later: did says which, in the words of the notice.
func (p *Player) note(ctx context.Context, cmd command.Command, did string) {
	if command.ReadOnly(cmd) || command.Clock(cmd) {
		return
	}
	st, _ := p.state()
	if st.status == StatusStarting {
		return
	}
	var off string
	tried := false
	if st.status == StatusTask && st.task != nil {
		tried = p.onTrack(ctx, cmd, st.task)
		if !tried && !command.Repair(cmd) {
			if t := lastOpenTask(st.blocks); t != nil && t.HintShown {
				off = fmt.Sprintf("You %s %s; the hint for this task is to %s.", did, cmd.String(), taskHow(st.task))
			} else if w := p.waiting(ctx, st.task); w != "" {
				off = fmt.Sprintf("You %s %s. The task waits for %s; t (or :lesson hint) shows one way there.", did, cmd.String(), w)
			}
		}
	}
	p.update(func(st *playerState) {
		st.learner = append(st.learner, cmd.String())
		if st.status == StatusTask {
			st.offTrack = off
			st.tried = st.tried || tried
			if t := lastOpenTask(st.blocks); t != nil {
				t.Acted = true
			}
		}
	})
}

// taskHow is what a task asks, in words: "press h (or type heal)".
func taskHow(t *Task) string {
	var cmds []string
	for _, d := range t.Do {
		cmds = append(cmds, d.Cmd.String())
	}
	typed := "type " + strings.Join(cmds, ", then ")
	switch {
	case t.Key == "":
		return typed
	case !strings.Contains(t.Key, " "):
		return "press " + t.Key + " (or " + typed + ")"
	}
	return t.Key + " (or " + typed + ")"
}

// onTrack says whether cmd is one of the task's commands: the same verb,
// on the same node once leader(…) and follower(…) are resolved by the lab.
func (p *Player) onTrack(ctx context.Context, cmd command.Command, t *Task) bool {
	node, hasNode := command.NodeOf(cmd)
	for _, d := range slices.Concat(t.Do, t.Also) {
		if d.Cmd.Name() != cmd.Name() {
			continue
		}
		want, ok := command.NodeOf(d.Cmd)
		if !ok || !hasNode {
			return true
		}
		if p.resolve(ctx, node) == p.resolve(ctx, want) {
			return true
		}
	}
	return false
}

// resolve names the node a reference means now, or the reference itself
// when it means none.
func (p *Player) resolve(ctx context.Context, ref command.NodeRef) string {
	id, err := p.Lab().Resolve(ctx, ref)
	if err != nil {
		return ref.String()
	}
	return id
}

// blocked says when a task waits on a node that is down — a replica's
// value, hwm(orders/0@n1), or state(n1) == up — since the wait cannot hold
// until the node runs again; "" otherwise.
func (p *Player) blocked(ctx context.Context, t *Task) string {
	for _, c := range t.goals() {
		for _, e := range []command.Expr{c.Cond.Left, c.Cond.Right} {
			val := e.Value
			node := val.Node
			if val.Func == "state" {
				if words := c.Cond.String(); strings.Contains(words, "down") || strings.Contains(words, "crashed") {
					continue // the task waits for it to go down
				}
				node = val.Arg
			}
			if node == "" || restarts(t, node) || !p.down(ctx, node) {
				continue
			}
			return fmt.Sprintf("%s is down, and this task waits for %s, which needs %s running: "+
				"select %s and press r.", node, c.Cond.String(), node, node)
		}
	}
	return ""
}

// down says whether the lab has node and it is down.
func (p *Player) down(ctx context.Context, node string) bool {
	v, err := p.Lab().Value(ctx, command.Expr{Value: command.Value{Kind: command.ValLab, Func: "state", Arg: node}})
	return err == nil && v == "down"
}

// restarts says whether a task's own commands restart a node: then its
// being down is the task, not a trap.
func restarts(t *Task, node string) bool {
	for _, d := range slices.Concat(t.Do, t.Also) {
		if r, ok := d.Cmd.(command.Restart); ok && r.Node.Kind == command.RefNode && r.Node.Node == node {
			return true
		}
	}
	return false
}

// waiting is the first of a task's conditions that does not hold yet,
// with the values the lab shows now: "hwm(orders/0@n1) == 2000 (now
// 1500)". The runner's wait decides; this only says what it waits for.
func (p *Player) waiting(ctx context.Context, t *Task) string {
	for _, c := range t.goals() {
		held, values, err := p.Lab().Holds(ctx, c.Cond)
		if err != nil {
			return c.Cond.String()
		}
		if held {
			continue
		}
		return c.Cond.String() + " (now " + strings.Join(values, " and ") + ")"
	}
	return ""
}

// goals are the waits that end a task.
func (t *Task) goals() []command.Wait {
	var out []command.Wait
	for _, w := range t.Wait {
		if c, ok := w.Cmd.(command.Wait); ok {
			out = append(out, c)
		}
	}
	return out
}

// joinNotes joins the notes that are not empty, each once.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}
