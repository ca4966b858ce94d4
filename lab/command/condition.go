package command

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Value kinds.
const (
	ValNumber = "number" // 3, 0.5
	ValWord   = "word"   // n1, none, up
	ValLab    = "lab"    // epoch(orders/0), rows(orders.outbox, …), state(n1)
	ValField  = "field"  // a checker field: lost, confirmed, …
	// ValSaved is a number a lesson kept earlier with {{epoch(orders/0)
	// as before}}: a bare name compared with a number, or given + N, as
	// in epoch(orders/0) > before. The lesson puts the number in before
	// the lab evaluates the condition.
	ValSaved = "saved"
)

// Value is one side of a condition.
type Value struct {
	Kind string
	Num  float64 // ValNumber
	Word string  // ValWord, or the field's name for ValField

	// ValLab: Func(Arg) or Func(Target@Node), or rows(Service.Table, Where).
	Func    string
	Target  Target // leader, epoch, hwm, leo, logstart; lag(GROUP, TOPIC/N)'s partition
	Node    string // epoch/hwm/leo of one replica: hwm(orders/0@n1)
	Arg     string // lag, depth, state, …: a group, queue, node, client or service
	Service string // rows
	Table   string // rows
	Where   string // rows: an SQL condition, or ""
	Key     string // partition_of: the key (Arg is the topic)
	Other   string // speedup: the client compared with (Arg is the one measured)
	// epoch(P@n1, 1500): the epoch of the record at offset At, as that
	// replica (or, without @, the leader) holds it
	At    int64
	HasAt bool
}

// labFunc describes one lab value function.
type labFunc struct {
	name    string
	arg     string // how its argument is written, for messages
	numeric bool
	onNode  bool // accepts @node
	target  bool // its argument is a partition or queue
	help    string
}

var labFuncs = []labFunc{
	{"leader", "P", false, false, true, "the node leading P at the highest epoch, or none; leader(controller) leads the controller"},
	{"epoch", "P", true, true, true, "P's epoch on its leader (the highest among live replicas when none leads); P@n1 on one replica; epoch(P@n1, 1500) the epoch of the record at offset 1500 as n1 holds it; epoch(controller) the controller's"},
	{"hwm", "P", true, true, true, "P's high-water mark: the next offset to commit; P@n1 on one replica"},
	{"leo", "P", true, true, true, "P's log end offset, uncommitted entries included; P@n1 on one replica"},
	{"logstart", "P", true, false, true, "P's log start offset (retention moves it)"},
	{"records", "P", true, true, true, "the records P's log holds, on its leader (compaction and retention remove some); P@n1 on one replica"},
	{"segments", "P", true, true, true, "the segments (each a .log file with its indexes) P's log holds, on its leader; P@n1 on one replica"},
	{"segment", "P[, OFFSET]", true, true, true, "the base offset of P's active segment, the number its newest .log file is named after; segment(P, 1500) of the segment holding offset 1500; P@n1 on one replica"},
	{"position", "P, OFFSET", true, true, true, "the byte position in its segment's .log file of the batch holding OFFSET, found as a fetch finds it: the segment, the last .index entry at or before OFFSET, then batch by batch; P@n1 on one replica"},
	{"lag", "GROUP", true, false, false, "a consumer group's lag: each partition's high-water mark minus the group's committed offset, summed, as Kafka counts it (on a compacted topic that includes offsets a pass emptied, which records(P) does not); lag(GROUP, TOPIC/N) on one partition"},
	{"lag_seconds", "GROUP", true, false, false, "a consumer group's lag in seconds; lag_seconds(GROUP, TOPIC/N) on one partition"},
	{"delivered", "GROUP", true, false, false, "messages handed to a consumer group's clients, or a queue's (its SQS clients' too), repeats included"},
	{"processed", "GROUP", true, false, false, "distinct messages a consumer group's clients finished their work on"},
	{"depth", "QUEUE", true, false, false, "a queue's messages: ready + in flight + delayed"},
	{"inflight", "QUEUE", true, false, false, "a queue's messages in flight"},
	{"oldest_age", "QUEUE", true, false, false, "the age in seconds of a queue's oldest message"},
	{"stale_acks", "QUEUE", true, false, false, "acks a queue's workers sent that it refused because their delivery was no longer the latest: the message had been received again"},
	{"throughput", "GROUP|QUEUE", true, false, false, "messages per second a group's consumers or a queue's workers finished over the last second of lab time (readable once they have run unchanged that long)"},
	{"members", "GROUP", true, false, false, "members of a consumer group in its current generation"},
	{"retries", "X", true, false, false, "retries scheduled by a worker or consumer, or for a queue or group"},
	{"retry_peak", "X", true, false, false, "the most of X's retries that came back (received again, tried again) within one 100 ms window of lab time"},
	{"rows", "SERVICE.TABLE[, WHERE]", true, false, false, "a count of rows in a service's table"},
	{"p50", "checkout", true, false, false, "the checkout's median answer time in seconds of lab time, error pages included"},
	{"p99", "checkout", true, false, false, "the answer time in seconds that 99% of the checkout's buyers got within, error pages included"},
	{"arrived", "checkout", true, false, false, "buyers who reached the checkout"},
	{"answered", "checkout", true, false, false, "buyers the checkout answered, with success or an error page"},
	{"served", "checkout", true, false, false, "buyers the checkout answered with success"},
	{"errors", "checkout", true, false, false, "buyers the checkout showed an error page"},
	{"no_thread", "checkout", true, false, false, "error pages because no request thread came free before the buyer's deadline"},
	{"charged_but_failed", "checkout", true, false, false, "buyers charged and then shown an error page"},
	{"busy", "checkout", true, false, false, "the checkout's request threads at work now"},
	{"waiting", "checkout", true, false, false, "buyers waiting for a request thread now"},
	{"sqs_answers", "NODE", false, false, false, "yes when NODE's SQS port (sqs listen) takes a connection now, no when nothing listens there"},
	{"state", "X", false, false, false, "a node, client or service: up, down, crashed or stopped"},
	{"elapsed", "LOAD", true, false, false, "lab seconds since a load (named by its client or topic) began sending"},
	{"idle", "GROUP", true, false, false, "a consumer group's members that own no partition: more members than partitions"},
	{"owned", "GROUP", true, false, false, "partitions of a consumer group's topics that a member owns in its current generation: fewer than the partitions means some go unread"},
	{"partition_of", "TOPIC, KEY", true, false, false, "the partition KEY goes to in TOPIC: murmur2(KEY) % the topic's partition count"},
	{"workers", "GROUP", true, false, false, "clients of a consumer group or queue that finished work on at least one message"},
	{"requests", "CLIENT", true, false, false, "produce requests a client's last produce command sent, retries included: one per batch"},
	{"latency", "CLIENT", true, false, false, "milliseconds of lab time a produce request of a client's last produce command took, on average: one batch sent and answered"},
	{"recognised", "CLIENT", true, false, false, "messages of a client's last produce command that a partition recognised as a retry and answered with the original offset"},
	{"produce_rate", "CLIENT", true, false, false, "messages per second of lab time that a client's last produce command got acknowledged"},
	{"speedup", "CLIENT, CLIENT", true, false, false, "how many times the first client's produce_rate is the second's: speedup(hundred, one)"},
}

// atOffset are the lab value functions that take an offset after the
// partition: epoch(orders/0@n1, 1500). position needs one.
var atOffset = map[string]bool{"epoch": true, "segment": true, "position": true}

// segmentFunc are the lab value functions that read a partition's
// segments, which a queue does not have.
var segmentFunc = map[string]bool{"segments": true, "segment": true, "position": true}

// onPartition are the lab value functions that take GROUP, TOPIC/N as well
// as GROUP: lag(billing, orders/1).
var onPartition = map[string]bool{"lag": true, "lag_seconds": true}

func findFunc(name string) (labFunc, bool) {
	for _, f := range labFuncs {
		if f.name == name {
			return f, true
		}
	}
	return labFunc{}, false
}

// onNodeFuncs are the lab value functions that read one replica with @NODE.
func onNodeFuncs() []string {
	var out []string
	for _, f := range labFuncs {
		if f.onNode {
			out = append(out, f.name)
		}
	}
	return out
}

func funcNames() []string {
	out := make([]string, len(labFuncs))
	for i, f := range labFuncs {
		out[i] = f.name
	}
	return out
}

// Services are the simulated services a lab can run.
var Services = []string{"orders", "payments", "wallet", "checkout"}

// HandlerServices are the services that take deliveries: a consumer or
// worker started with service=NAME hands them each message as its work.
var HandlerServices = []string{"payments", "wallet"}

// Numeric reports whether the value is a number (else a word).
func (v Value) Numeric() bool {
	switch v.Kind {
	case ValNumber, ValField, ValSaved:
		return true
	case ValLab:
		f, _ := findFunc(v.Func)
		return f.numeric
	}
	return false
}

func (v Value) String() string {
	switch v.Kind {
	case ValNumber:
		return formatFloat(v.Num)
	case ValWord:
		return quoteWord(v.Word)
	case ValField, ValSaved:
		return v.Word
	}
	switch {
	case v.Func == "partition_of":
		return v.Func + "(" + v.Arg + ", " + v.Key + ")"
	case v.Func == "speedup":
		return v.Func + "(" + v.Arg + ", " + v.Other + ")"
	case v.Func == "rows":
		s := "rows(" + v.Service + "." + v.Table
		if v.Where != "" {
			s += ", " + v.Where
		}
		return s + ")"
	case v.HasAt && v.Node != "":
		return v.Func + "(" + v.Target.String() + "@" + v.Node + ", " + strconv.FormatInt(v.At, 10) + ")"
	case v.HasAt:
		return v.Func + "(" + v.Target.String() + ", " + strconv.FormatInt(v.At, 10) + ")"
	case v.Node != "":
		return v.Func + "(" + v.Target.String() + "@" + v.Node + ")"
	case v.Arg != "" && v.Target.IsPartition:
		return v.Func + "(" + v.Arg + ", " + v.Target.String() + ")"
	case v.Arg != "":
		return v.Func + "(" + v.Arg + ")"
	}
	return v.Func + "(" + v.Target.String() + ")"
}

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

// checkerFields are the fields of the checker's report a condition reads
// as bare words, in the report's table order. Package checker reads each
// of them from its report.
var checkerFields = []string{"confirmed", "lost", "unknown", "duplicate_deliveries", "duplicate_effects", "order_violations",
	"dead_lettered", "expired", "dropped", "rejected", "duplicate_writes", "unchecked", "moved", "reordered", "fetched", "refetched"}

// CheckerFields returns the checker fields a condition can read (expect
// lost == 0), in the report's table order.
func CheckerFields() []string { return append([]string(nil), checkerFields...) }

func fieldSet() map[string]struct{} {
	m := map[string]struct{}{}
	for _, f := range checkerFields {
		m[f] = struct{}{}
	}
	return m
}

// parseValue reads one side of a condition from a word token.
func parseValue(t token) (Value, *posError) {
	s := t.text
	if t.quoted {
		return Value{Kind: ValWord, Word: s}, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
			return Value{}, errAt(t.col, "%q is not a number a lab value can be compared with", s)
		}
		return Value{Kind: ValNumber, Num: f}, nil
	}
	if _, ok := fieldSet()[s]; ok {
		return Value{Kind: ValField, Word: s}, nil
	}
	name, inner, isFunc := strings.Cut(s, "(")
	if !isFunc {
		if !nameRe.MatchString(s) {
			return Value{}, errAt(t.col, "%q is not a value; values are numbers, words like n1 or none, or lab values like hwm(orders/0)", s)
		}
		return Value{Kind: ValWord, Word: s}, nil
	}
	f, ok := findFunc(name)
	if !ok {
		return Value{}, errAt(t.col, "unknown lab value %q; the lab values are %s", name+"(", strings.Join(funcNames(), ", ")).withSuggest(nearest(name, funcNames()))
	}
	close := strings.LastIndexByte(inner, ')')
	if close != len(inner)-1 {
		return Value{}, errAt(t.col, "unexpected text after %s(…): %q", name, inner[close+1:])
	}
	arg := strings.TrimSpace(inner[:close])
	argCol := t.col + len([]rune(name)) + 1
	v := Value{Kind: ValLab, Func: name}
	switch {
	case name == "rows":
		return parseRows(v, arg, argCol)
	case name == "speedup":
		return parseSpeedup(v, arg, argCol)
	case name == "partition_of":
		return parsePartitionOf(v, arg, argCol)
	case f.target:
		if atOffset[name] {
			if before, at, ok := strings.Cut(arg, ","); ok {
				at = strings.TrimSpace(at)
				n, err := strconv.ParseInt(at, 10, 64)
				if err != nil || n < 0 {
					return Value{}, errAt(argCol, "%s(%s, %q): after the comma comes an offset, a whole number from 0 up, as in %s(orders/0@n1, 1500)", name, strings.TrimSpace(before), at, name)
				}
				v.At, v.HasAt = n, true
				arg = strings.TrimSpace(before)
			} else if name == "position" {
				return Value{}, errAt(argCol, "position(%s) needs an offset after a comma: the batch holding which record? As in position(orders/0@n2, 1500)", arg)
			}
		} else if strings.Contains(arg, ",") && !onPartition[name] {
			return Value{}, errAt(argCol, "%s(…) takes one partition or queue; only epoch, segment and position take an offset after a comma, as in epoch(orders/0@n1, 1500)", name)
		}
		target, node, hasNode := strings.Cut(arg, "@")
		if hasNode {
			if !f.onNode {
				return Value{}, errAt(argCol, "%s(…) reads the partition's leader; only %s take @NODE", name, strings.Join(onNodeFuncs(), ", "))
			}
			if !nodeRe.MatchString(node) {
				return Value{}, errAt(argCol, "%q after '@' is not a node; write n1…n9, as in hwm(orders/0@n1)", node)
			}
			v.Node = node
		}
		tg, err := parseTarget(target)
		if err != nil {
			return Value{}, errAt(argCol, "%s(…): %v", name, err)
		}
		if v.HasAt && !tg.IsPartition {
			return Value{}, errAt(argCol, "%s(%s, %d): only a partition's records have offsets; name one, as in %s(orders/0@n1, 1500)", name, target, v.At, name)
		}
		if segmentFunc[name] && !tg.IsPartition {
			return Value{}, errAt(argCol, "%s(%s): only a partition's log has segments; name one, as in %s(orders/0@n1)", name, target, name)
		}
		v.Target = tg
	case onPartition[name] && strings.Contains(arg, ","):
		group, part, _ := strings.Cut(arg, ",")
		group, part = strings.TrimSpace(group), strings.TrimSpace(part)
		if !nameRe.MatchString(group) {
			return Value{}, errAt(argCol, "%s(…) needs a group first, as in %s(billing, orders/1): a name of letters, digits, '.', '_' or '-'", name, name)
		}
		tg, err := parseTarget(part)
		if err == nil && !tg.IsPartition {
			err = fmt.Errorf("%q is a topic; name one of its partitions, as in %s/0", part, part)
		}
		if err != nil {
			return Value{}, errAt(argCol, "%s(%s, …): %v", name, group, err)
		}
		v.Arg, v.Target = group, tg
	default:
		if !nameRe.MatchString(arg) {
			return Value{}, errAt(argCol, "%s(…) needs %s: a name of letters, digits, '.', '_' or '-'", name, f.arg)
		}
		if svc := ServiceOf(name); svc != "" && arg != svc {
			return Value{}, errAt(argCol, "%s(%s): only the %s service measures this; write %s(%s)", name, arg, svc, name, svc)
		}
		v.Arg = arg
	}
	return v, nil
}

func parseRows(v Value, arg string, col int) (Value, *posError) {
	table, where, hasWhere := strings.Cut(arg, ",")
	table = strings.TrimSpace(table)
	svc, tbl, ok := strings.Cut(table, ".")
	if !ok || !nameRe.MatchString(svc) || !identRe.MatchString(tbl) {
		return Value{}, errAt(col, "rows(…) needs SERVICE.TABLE, as in rows(orders.outbox) or rows(orders.outbox, status='pending')")
	}
	if !contains(Services, svc) {
		return Value{}, errAt(col, "unknown service %q; the services are %s", svc, orList(Services)).withSuggest(nearest(svc, Services))
	}
	v.Service, v.Table = svc, tbl
	if hasWhere {
		v.Where = strings.TrimSpace(where)
		if v.Where == "" {
			return Value{}, errAt(col, "rows(%s, …): the condition after ',' is empty; leave out the comma to count every row", table)
		}
	}
	return v, nil
}

func parsePartitionOf(v Value, arg string, col int) (Value, *posError) {
	topic, key, ok := strings.Cut(arg, ",")
	topic, key = strings.TrimSpace(topic), strings.TrimSpace(key)
	if !ok || !nameRe.MatchString(topic) || !nameRe.MatchString(key) {
		return Value{}, errAt(col, "partition_of(…) needs TOPIC, KEY, as in partition_of(orders, 881); a key is letters, digits, '.', '_' or '-'")
	}
	v.Arg, v.Key = topic, key
	return v, nil
}

func parseSpeedup(v Value, arg string, col int) (Value, *posError) {
	a, b, ok := strings.Cut(arg, ",")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if !ok || !nameRe.MatchString(a) || !nameRe.MatchString(b) {
		return Value{}, errAt(col, "speedup(…) needs two clients, CLIENT, CLIENT, as in speedup(hundred, one): the first's produce rate over the second's")
	}
	if a == b {
		return Value{}, errAt(col, "speedup(%s, %s) compares a client with itself and is always 1; name two clients, as in speedup(hundred, one)", a, b)
	}
	v.Arg, v.Other = a, b
	return v, nil
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
