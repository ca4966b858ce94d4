package tui

// A task as the pane follows it: what the learner ran and whether the task
// asks for it, which of its conditions still waits, with the values on
// screen, and when it waits on a node that is down.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lessons"
)

// readOnlyCommands change nothing in the cluster, and repairs put it
// back: a learner may run them at any time without leaving the lesson's
// path.
var (
	readOnlyCommands = []string{"help", "check", "expect", "wait", "sql", "pause", "resume", "speed"}
	repairCommands   = []string{"restart", "heal"}
)

// noteLearner remembers a command the learner ran during the step and,
// while a task waits, says so when it is not what the task asks for: the
// lab may no longer get where the task waits for it to go.
func (s *LessonSource) noteLearner(line string) {
	cmd, err := command.Parse(line)
	if err != nil || slices.Contains(readOnlyCommands, cmd.Name()) {
		return
	}
	st, _ := s.state()
	if st.status == LessonStarting {
		return
	}
	var off string
	tried := false
	if st.status == LessonTask && st.task != nil {
		tried = s.onTrack(cmd, st.task)
		if !tried && !slices.Contains(repairCommands, cmd.Name()) {
			off = fmt.Sprintf("You ran %s; this task asks you to %s.", cmd.String(), taskHow(st.task))
		}
	}
	s.update(func(st *lessonState) {
		st.learner = append(st.learner, cmd.String())
		if st.status == LessonTask {
			st.offTrack = off
			st.tried = st.tried || tried
		}
	})
}

// taskHow is what a task asks, in words: "press h (or type heal)".
func taskHow(t *lessons.Task) string {
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

// taskBlocked says when a task waits on a node that is down — a replica's
// value, hwm(orders/0@n1), or state(n1) == up — since the wait cannot hold
// until the node runs again; "" otherwise.
func taskBlocked(v *ViewState, t *lessons.Task) string {
	down := map[string]bool{}
	for _, n := range v.Nodes {
		down[n.ID] = !n.Up
	}
	for _, w := range t.Wait {
		c, ok := w.Cmd.(command.Wait)
		if !ok {
			continue
		}
		for _, e := range []command.Expr{c.Cond.Left, c.Cond.Right} {
			val := e.Value
			node := val.Node
			if val.Func == "state" {
				if words := c.Cond.String(); strings.Contains(words, "down") || strings.Contains(words, "crashed") {
					continue // the task waits for it to go down
				}
				node = val.Arg
			}
			if node != "" && down[node] && !restarts(t, node) {
				return fmt.Sprintf("%s is down, and this task waits for %s, which needs %s running: "+
					"select %s and press r.", node, c.Cond.String(), node, node)
			}
		}
	}
	return ""
}

// restarts says whether a task's own commands restart a node: then its
// being down is the task, not a trap.
func restarts(t *lessons.Task, node string) bool {
	for _, d := range t.Do {
		if r, ok := d.Cmd.(command.Restart); ok && r.Node.Kind == command.RefNode && r.Node.Node == node {
			return true
		}
	}
	return false
}

// waiting is the first of a task's conditions that does not hold yet, with
// the values the screen shows now: "hwm(orders/0@n1) == 2000 (now 1500)".
// The runner's wait decides; this only says what it waits for.
func waiting(v *ViewState, t *lessons.Task) string {
	for _, w := range t.Wait {
		c, ok := w.Cmd.(command.Wait)
		if !ok {
			continue
		}
		l, lok := viewValue(v, c.Cond.Left)
		r, rok := viewValue(v, c.Cond.Right)
		if !lok || !rok {
			return c.Cond.String()
		}
		if command.Holds(c.Cond.Op, l, r) {
			continue
		}
		var now []string
		for _, side := range []struct {
			e   command.Expr
			val any
		}{{c.Cond.Left, l}, {c.Cond.Right, r}} {
			if side.e.Value.Kind == command.ValLab {
				now = append(now, valueWord(side.val))
			}
		}
		return c.Cond.String() + " (now " + strings.Join(now, " and ") + ")"
	}
	return ""
}

func valueWord(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// viewValue reads one side of a condition from the view, for the values
// a task's wait names most: a number or word, leader, epoch, hwm, leo and
// logstart of a partition or one of its replicas, and a node's state.
func viewValue(v *ViewState, e command.Expr) (any, bool) {
	val := e.Value
	switch val.Kind {
	case command.ValNumber:
		return val.Num + e.Offset, true
	case command.ValWord:
		return val.Word, true
	case command.ValLab:
	default:
		return nil, false
	}
	if val.Func == "state" {
		for _, n := range v.Nodes {
			if n.ID == val.Arg {
				if n.Up {
					return "up", true
				}
				return "down", true
			}
		}
		return nil, false
	}
	if !val.Target.IsPartition {
		return nil, false
	}
	var p *Partition
	for i := range v.Partitions {
		if v.Partitions[i].Name == val.Target.String() {
			p = &v.Partitions[i]
		}
	}
	if p == nil {
		return nil, false
	}
	if val.Func == "leader" {
		if p.Leader == "" {
			return "none", true
		}
		return p.Leader, true
	}
	// The replica asked for, or the leader's (the highest epoch's without one).
	var rep *Replica
	for i := range p.Replicas {
		r := &p.Replicas[i]
		switch {
		case val.Node != "":
			if r.Node == val.Node {
				rep = r
			}
		case p.Leader != "":
			if r.Node == p.Leader {
				rep = r
			}
		case r.Role != "down" && (rep == nil || r.Epoch > rep.Epoch):
			rep = r
		}
	}
	if rep == nil || rep.Role == "down" { // a stopped replica has no value to show
		return nil, false
	}
	var n float64
	switch val.Func {
	case "epoch":
		n = float64(rep.Epoch)
		if val.Node == "" {
			n = float64(p.Epoch)
		}
	case "hwm":
		n = float64(rep.HWM)
	case "leo":
		n = float64(rep.LEO)
	case "logstart":
		n = float64(rep.LogStart)
	default:
		return nil, false
	}
	return n + e.Offset, true
}

// joinNotes joins the notes that are not empty.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

// onTrack says whether cmd is one of the task's commands: the same verb,
// on the same node once leader(…) and follower(…) are resolved.
func (s *LessonSource) onTrack(cmd command.Command, t *lessons.Task) bool {
	node, hasNode := cmdNode(cmd)
	var v *ViewState
	for _, d := range t.Do {
		if d.Cmd.Name() != cmd.Name() {
			continue
		}
		want, ok := cmdNode(d.Cmd)
		if !ok || !hasNode {
			return true
		}
		if v == nil {
			vs := s.lab.View()
			v = &vs
		}
		if resolveNode(v, node) == resolveNode(v, want) {
			return true
		}
	}
	return false
}

func cmdNode(c command.Command) (command.NodeRef, bool) {
	switch c := c.(type) {
	case command.Kill:
		return c.Node, true
	case command.Restart:
		return c.Node, true
	case command.Isolate:
		return c.Node, true
	case command.Slow:
		return c.Node, true
	case command.Elect:
		return c.Node, true
	}
	return command.NodeRef{}, false
}

// resolveNode names the node a reference means now, as the lab would.
func resolveNode(v *ViewState, ref command.NodeRef) string {
	if ref.Kind == command.RefNode {
		return ref.Node
	}
	name := ref.Of.String()
	for _, p := range v.Partitions {
		if p.Name != name {
			continue
		}
		if ref.Kind == command.RefLeader {
			return p.Leader
		}
		var fs []string
		for _, r := range p.Replicas {
			if r.Role == "follower" {
				fs = append(fs, r.Node)
			}
		}
		slices.Sort(fs)
		if len(fs) > 0 {
			return fs[0]
		}
	}
	for _, q := range v.Queues {
		if q.Name == name && ref.Kind == command.RefLeader {
			return q.Leader
		}
	}
	return ref.String()
}
