package lab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/broker/partlog"
	"github.com/mqlab/mqlab/lab/checker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
)

// notNow marks a value that cannot be read at this moment but may be soon
// (no leader during an election, a replica's node down): wait keeps
// polling, expect fails with it. Every other error is a script error.
// Family packages say it with family.NotNow.
func notNow(err error) error { return family.NotNow(err) }

// unnamedYet is a name no node or client has: a script error for an
// expect, "not yet" for a wait, since the client may be about to start.
type unnamedYet struct{ err error }

func (e unnamedYet) Error() string { return e.err.Error() }
func (e unnamedYet) Unwrap() error { return e.err }

// waitable says whether a wait goes on after err: the value cannot be read
// now, or names a client that may yet start.
func waitable(err error) bool {
	var u unnamedYet
	return isNotNow(err) || errors.As(err, &u)
}

func isNotNow(err error) bool { return family.IsNotNow(err) }

// reader evaluates values against one view of the lab: one broker
// snapshot, and at most one check, per evaluation.
type reader struct {
	r      *run
	ctx    context.Context
	snap   *broker.Snapshot
	report *checker.Report
	repErr error
	// quiet: a checker field is read from a check that leaves no trace
	// (see Lab.Peek)
	quiet bool
}

func (rd *reader) snapshot() broker.Snapshot {
	if rd.snap == nil {
		s := rd.r.w.cluster.SnapshotWindow(0)
		rd.snap = &s
	}
	return *rd.snap
}

func (rd *reader) checked() (checker.Report, error) {
	if rd.report == nil && rd.repErr == nil {
		check := rd.r.l.checkWorld
		if rd.quiet {
			check = func(ctx context.Context, w *world) (checker.Report, error) { return rd.r.l.report(ctx, w, false) }
		}
		rep, err := check(rd.ctx, rd.r.w)
		rd.report, rd.repErr = &rep, err
	}
	if rd.repErr != nil {
		return checker.Report{}, notNow(rd.repErr)
	}
	return *rd.report, nil
}

func (rd *reader) expr(e command.Expr) (any, error) {
	v, err := rd.value(e.Value)
	if err != nil || e.Offset == 0 {
		return v, err
	}
	return v.(float64) + e.Offset, nil
}

func (rd *reader) value(v command.Value) (any, error) {
	switch v.Kind {
	case command.ValNumber:
		return v.Num, nil
	case command.ValWord:
		return v.Word, nil
	case command.ValSaved:
		return nil, fmt.Errorf("%s: no value is kept under this name; a lesson keeps one with {{epoch(orders/0) as %s}} and can then compare with it, as in epoch(orders/0) > %s",
			v.Word, v.Word, v.Word)
	case command.ValField:
		rep, err := rd.checked()
		if err != nil {
			return nil, err
		}
		n, _ := rep.Field(v.Word)
		return float64(n), nil
	}
	switch v.Func {
	case "leader", "epoch", "hwm", "leo", "logstart", "records", "segments", "segment", "position", "held_back":
		return rd.partitionValue(v)
	case "state":
		return rd.state(v.Arg)
	case "elapsed":
		return rd.r.w.loads.Elapsed(v, rd.r.l.clock.Now())
	case "partition_of":
		return rd.r.w.partitionOf(v)
	case "requests", "recognised", "latency", "produce_rate", "speedup":
		return rd.r.w.produceValue(v)
	case "recognised_all":
		return rd.r.w.recognisedAll(v)
	}
	for _, f := range valueFamilies {
		if val, ok, err := f.value(rd.ctx, rd.r.w, v); ok {
			return val, err
		}
	}
	return nil, fmt.Errorf("%s: the lab cannot read this value", v)
}

func (rd *reader) partitionValue(v command.Value) (any, error) {
	if isController(v.Target) && v.Node == "" && (v.Func == "leader" || v.Func == "epoch") {
		// The controller, which keeps the topics, is a raft group of its
		// own: leader(controller) and epoch(controller) read it.
		ctl := rd.snapshot().Controller
		if v.Func == "leader" {
			return orNone(ctl.Leader), nil
		}
		if ctl.Epoch == 0 {
			return nil, notNow(fmt.Errorf("%s: no node of the controller is up", v))
		}
		return float64(ctl.Epoch), nil
	}
	if !v.Target.IsPartition {
		return rd.r.w.queueValue(v)
	}
	p, err := rd.r.w.partition(v.Target.Name, v.Target.Partition)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	if v.Func == "leader" {
		return orNone(p.Leader), nil
	}
	if v.HasAt && v.Func == "epoch" {
		return rd.recordEpoch(v, p)
	}
	if v.HasAt {
		return rd.segmentValue(v, p)
	}
	if v.Node != "" {
		if _, err := rd.r.w.node(v.Node); err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
		var hosts []string
		for _, r := range p.Replicas {
			hosts = append(hosts, r.Node)
			if r.Node != v.Node {
				continue
			}
			if !r.Up {
				return nil, notNow(fmt.Errorf("%s: %s is down", v, v.Node))
			}
			return replicaField(v.Func, r, p), nil
		}
		return nil, fmt.Errorf("%s: %s holds no replica of %s; its replicas are on %s", v, v.Node, v.Target, strings.Join(hosts, ", "))
	}
	if v.Func == "epoch" {
		if p.Epoch == 0 {
			return nil, notNow(fmt.Errorf("%s: no replica of %s is up", v, v.Target))
		}
		return float64(p.Epoch), nil
	}
	// On the leader; without one, the highest among the live replicas.
	best, found := 0.0, false
	for _, r := range p.Replicas {
		if !r.Up || p.Leader != "" && r.Node != p.Leader {
			continue
		}
		if f := replicaField(v.Func, r, p); !found || f > best {
			best, found = f, true
		}
	}
	if !found {
		return nil, notNow(fmt.Errorf("%s: no replica of %s is up", v, v.Target))
	}
	return best, nil
}

// recordEpoch reads epoch(P@n1, OFFSET): the epoch of the record at
// OFFSET as n1's replica holds it, or without @ as the leader holds it.
// A replica that holds nothing there yet is "not now": a wait goes on, an
// expect fails saying what the replica's log does hold.
func (rd *reader) recordEpoch(v command.Value, p broker.PartitionState) (any, error) {
	if v.Node != "" {
		if _, err := rd.r.w.node(v.Node); err != nil {
			return nil, fmt.Errorf("%s: %w", v, err)
		}
	}
	node, rs, err := replicaUp(v, p)
	if err != nil {
		return nil, err
	}
	tp := broker.TopicPartition{Topic: v.Target.Name, Partition: v.Target.Partition}
	e, found, err := rd.r.w.cluster.EntryAt(tp, node, v.At)
	if errors.Is(err, broker.ErrNodeDown) {
		return nil, notNow(fmt.Errorf("%s: %s is down", v, node))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	if !found {
		return nil, notNow(fmt.Errorf("%s: %s holds no record at offset %d; its log holds offsets %d to %d", v, node, v.At, rs.LogStart, rs.LogEnd-1))
	}
	return float64(e.Epoch), nil
}

func replicaField(fn string, r broker.ReplicaState, p broker.PartitionState) float64 {
	switch fn {
	case "epoch":
		return float64(r.Epoch)
	case "hwm":
		return float64(r.HighWatermark)
	case "leo":
		return float64(r.LogEnd)
	case "held_back":
		return float64(r.HeldBack)
	case "logstart":
		return float64(r.LogStart)
	case "records":
		n := 0
		for _, s := range r.Segments {
			n += s.Records
		}
		return float64(n)
	case "segments":
		return float64(len(r.Segments))
	case "segment":
		if n := len(r.Segments); n > 0 {
			return float64(r.Segments[n-1].BaseOffset)
		}
		return float64(r.LogStart)
	}
	return 0
}

// state reads state(X): a node (up, down), a producer (up), a load (up
// while it runs, stopped after), or whatever a feature knows by that name.
func (rd *reader) state(name string) (any, error) {
	for _, n := range rd.snapshot().Nodes {
		if n.ID == name {
			return stateOfNode(n), nil
		}
	}
	loadState := ""
	for _, ld := range rd.r.w.loads.States() {
		if ld.Client == name {
			loadState = LoadStopped
			if ld.State != LoadStopped {
				return "up", nil
			}
		}
	}
	if loadState != "" {
		return loadState, nil
	}
	// A feature knows more than "up" about its own clients and services
	// (crashed, stopped), also when they publish as a client of that name.
	for _, f := range stateFeatures {
		if val, ok, err := f.value(rd.ctx, rd.r.w, command.Value{Kind: command.ValLab, Func: "state", Arg: name}); ok {
			return val, err
		}
	}
	if rd.r.w.hasClient(name) {
		return "up", nil
	}
	var names []string
	for _, n := range rd.snapshot().Nodes {
		names = append(names, n.ID)
	}
	names = append(names, rd.r.w.clientNames()...)
	// A wait takes it for "not yet": a lesson's task may wait for a client
	// the learner is about to start. An expect refuses it as a bad name.
	return nil, unnamedYet{fmt.Errorf("state(%s): no node or client named %q; there are %s%s", name, name, strings.Join(names, ", "), didYouMean(name, names))}
}

// evaluate reads both sides of a condition and compares them. desc says
// what the lab values were, for messages.
func (r *run) evaluate(ctx context.Context, c command.Condition) (held bool, desc string, err error) {
	rd := &reader{r: r, ctx: ctx}
	var vals [2]any
	var parts []string
	for i, e := range []command.Expr{c.Left, c.Right} {
		v, err := rd.expr(e)
		if err != nil {
			return false, "", err
		}
		vals[i] = v
		if k := e.Value.Kind; k == command.ValLab || k == command.ValField {
			parts = append(parts, fmt.Sprintf("%s is %s", e, show(v)))
		}
	}
	held = c.Eval(vals[0], vals[1])
	if !held {
		// A count the checker got wrong-footed on says which records it
		// counted, as check why would.
		for _, e := range []command.Expr{c.Left, c.Right} {
			if e.Value.Kind != command.ValField || rd.report == nil {
				continue
			}
			if why := rd.report.Why[e.Value.Word]; len(why) > 0 {
				parts = append(parts, fmt.Sprintf("the first: %s", why[0]))
			}
		}
	}
	return held, strings.Join(parts, ", "), nil
}

// show formats a value for a reader; numbers to two decimals at most
// (an age of 2.000299326 s reads as 2).
func show(v any) string {
	if f, ok := v.(float64); ok {
		// Seconds measured on a clock carry noise in their last digits:
		// a reader needs hundredths at most.
		if r := math.Round(f*100) / 100; math.Abs(f) < 1e12 {
			f = r
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// readsChecker reports whether a condition needs a check (a drain) to read.
func readsChecker(c command.Condition) bool {
	return c.Left.Value.Kind == command.ValField || c.Right.Value.Kind == command.ValField
}

func (r *run) wait(ctx context.Context, c command.Wait) error {
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	start := time.Now()
	deadline := start.Add(c.Timeout)
	evalCtx := func() (context.Context, context.CancelFunc) { return context.WithDeadline(ctx, deadline) }
	ectx, ecancel := evalCtx()
	held, desc, err := r.evaluate(ectx, c.Cond)
	ecancel()
	if err != nil && !waitable(err) {
		return fmt.Errorf("wait: %w", err)
	}
	r.begin(c.String())
	every := 10 * time.Millisecond
	if readsChecker(c.Cond) {
		every = 100 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var look func() // renews the hold below at each look
	if every < clock.Brisk {
		// Lab time runs no further past the last look than the wall
		// clock gives a step of the lab's work (clock.Hold): a machine
		// too busy to look for a while holds lab time instead, so what
		// the script does next happens at about the lab time the
		// condition came true, not whenever the machine got round to
		// noticing it.
		h := r.l.clock.Hold()
		defer h.Close()
		look = func() { h.On(r.l.clock.Now()) }
		look()
	}
	given := r.l.clock.Given()
	for !held {
		// Time the lab spent waiting for a busy machine does not count
		// against the wait: the timeout is for the lab, not the machine.
		if g := r.l.clock.Given(); g > given {
			factor, _ := r.l.clock.Speed()
			deadline = deadline.Add(time.Duration(float64(g-given) / factor))
			given = g
		}
		if !time.Now().Before(deadline) {
			if err != nil {
				desc = err.Error()
			}
			return fmt.Errorf("wait %s: timed out after %v; %s", c.Cond, c.Timeout, desc)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait %s: %w", c.Cond, ctx.Err())
		case <-tick.C:
		}
		if look != nil {
			look()
		}
		ectx, ecancel := evalCtx()
		held, desc, err = r.evaluate(ectx, c.Cond)
		ecancel()
		if err != nil && !waitable(err) {
			return fmt.Errorf("wait: %w", err)
		}
	}
	r.say(EventWait, "%s held after %.2fs (%s)", c.Cond, time.Since(start).Seconds(), desc)
	return nil
}

// leaderless is a value that reads the leader's replica while the
// partition has none.
type leaderless struct{ error }

func (e leaderless) Unwrap() error { return e.error }

// electionGrace is how long an expect waits for a partition to have a
// leader again before it fails on a value only a leader can give: an
// election that raft's own timers start on a busy machine, with every
// replica up, is over well within it.
const electionGrace = 3 * time.Second

func (r *run) expect(ctx context.Context, c command.Expect) error {
	ctx, cancel := r.w.bind(ctx)
	defer cancel()
	held, desc, err := r.evaluate(ctx, c.Cond)
	for grace := time.Now().Add(electionGrace); errors.As(err, new(leaderless)) && time.Now().Before(grace); {
		if clock.SleepWall(ctx, 20*time.Millisecond) != nil {
			break
		}
		held, desc, err = r.evaluate(ctx, c.Cond)
	}
	if err != nil && !isNotNow(err) {
		return fmt.Errorf("expect: %w", err)
	}
	r.begin(c.String())
	if err != nil {
		desc = err.Error()
	}
	if held {
		r.observed = desc
		r.say(EventExpect, "✓ %s (%s)", c.Cond, desc)
		return nil
	}
	r.say(EventExpect, "✗ %s: %s", c.Cond, desc)
	return &ExpectationError{Cond: c.Cond.String(), Got: desc}
}

// Value reads one lab value exactly as wait and expect read it (a partition's
// leader or mark, a group's lag, a table's rows, a checker field…) and
// formats it for a reader. The lessons fill their {{…}} placeholders with it.
func (l *Lab) Value(ctx context.Context, e command.Expr) (string, error) {
	w, err := l.world()
	if err != nil {
		return "", err
	}
	rd := &reader{r: &run{l: l, w: w}, ctx: ctx}
	v, err := rd.expr(e)
	if err != nil {
		return "", err
	}
	return show(v), nil
}

// Holds evaluates a condition now, as expect does, and returns the lab
// values it read, formatted ("1500"). A condition on a checker field
// needs a check, which drains the cluster: Holds refuses it.
func (l *Lab) Holds(ctx context.Context, c command.Condition) (bool, []string, error) {
	if readsChecker(c) {
		return false, nil, fmt.Errorf("%s: %w", c, ErrNeedsCheck)
	}
	w, err := l.world()
	if err != nil {
		return false, nil, err
	}
	r := (&reader{r: &run{l: l, w: w}, ctx: ctx}).holds(c)
	return r.Held, r.Shown, r.Err
}

// Reading is a condition as Peek read it: whether it held, the values it
// read (formatted), or why it could not be read.
type Reading struct {
	Held  bool
	Shown []string
	Err   error
}

// Peek evaluates conditions now as Holds does, and reads checker fields
// too, all from one check that leaves no trace: no job on screen, no
// report kept as the lab's last check. A check drains, so it can wait up
// to DrainTimeout for leaders. It serves an audit that compares what a
// lesson's expectations read at different moments.
func (l *Lab) Peek(ctx context.Context, conds []command.Condition) []Reading {
	out := make([]Reading, len(conds))
	w, err := l.world()
	if err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	rd := &reader{r: &run{l: l, w: w}, ctx: ctx, quiet: true}
	for i, c := range conds {
		out[i] = rd.holds(c)
	}
	return out
}

// holds evaluates c with what rd has read so far.
func (rd *reader) holds(c command.Condition) Reading {
	var vals [2]any
	var shown []string
	for i, e := range []command.Expr{c.Left, c.Right} {
		v, err := rd.expr(e)
		if err != nil {
			return Reading{Err: err}
		}
		vals[i] = v
		if e.Value.Kind == command.ValLab || e.Value.Kind == command.ValField {
			shown = append(shown, show(v))
		}
	}
	return Reading{Held: c.Eval(vals[0], vals[1]), Shown: shown}
}

// Resolve names the node a reference means now: leader(orders/0) is
// whoever leads it, follower(orders/0) its first live follower.
func (l *Lab) Resolve(ctx context.Context, ref command.NodeRef) (string, error) {
	w, err := l.world()
	if err != nil {
		return "", err
	}
	return w.resolve(ref)
}

// partitionOf reads partition_of(TOPIC, KEY): the partition a producer
// sends KEY to in TOPIC as it is now, murmur2(KEY) % its partition count,
// the rule the broker's producer uses. Two topics with different counts
// show where a key would move if one topic grew from the one count to the
// other.
func (w *world) partitionOf(v command.Value) (any, error) {
	t, err := w.topic(v.Arg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	if len(t.Partitions) == 0 {
		return nil, notNow(fmt.Errorf("%s: %s has no partitions yet", v, v.Arg))
	}
	return float64(partlog.PartitionForKey([]byte(v.Key), len(t.Partitions))), nil
}

// replicaUp is the replica an offset value such as epoch(P@n1, OFFSET)
// reads, with its node: the one on v's node, or without @ the leader's.
// No leader now, or the replica down, is "not now"; a node that holds no
// replica of the partition is an error naming those that do.
func replicaUp(v command.Value, p broker.PartitionState) (string, *broker.ReplicaState, error) {
	node := v.Node
	if node == "" {
		if p.Leader == "" {
			return "", nil, notNow(leaderless{fmt.Errorf("%s: %s has no leader now; name a replica, as in %s(%s@n1, %d)", v, v.Target, v.Func, v.Target, v.At)})
		}
		node = p.Leader
	}
	var hosts []string
	for i, r := range p.Replicas {
		hosts = append(hosts, r.Node)
		if r.Node == node {
			if !r.Up {
				return "", nil, notNow(fmt.Errorf("%s: %s is down", v, node))
			}
			return node, &p.Replicas[i], nil
		}
	}
	return "", nil, fmt.Errorf("%s: %s holds no replica of %s; its replicas are on %s", v, node, v.Target, strings.Join(hosts, ", "))
}
