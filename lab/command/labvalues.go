package command

// The values a condition compares: the kinds of value, the checker's
// fields, the lab's functions with their help, how one side of a
// condition is read from its word, and how it is written back.

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
	Key     string // partition_of: the key (Arg is the topic); sqs_reaches: the queue (Arg is the node)
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
	{"held_back", "P", true, true, true, "reads P's leader answered while its log held records above its high-water mark, which it kept back; P@n1 on one replica"},
	{"logstart", "P", true, false, true, "P's log start offset (retention moves it)"},
	{"records", "P", true, true, true, "the records P's log holds, on its leader (compaction and retention remove some); P@n1 on one replica"},
	{"segments", "P", true, true, true, "the segments (each a .log file with its indexes) P's log holds, on its leader; P@n1 on one replica"},
	{"segment", "P[, OFFSET]", true, true, true, "the base offset of P's active segment, the number its newest .log file is named after; segment(P, 1500) of the segment holding offset 1500; P@n1 on one replica"},
	{"position", "P, OFFSET", true, true, true, "the byte position in its segment's .log file of the batch holding OFFSET, found as a fetch finds it: the segment, the last .index entry at or before OFFSET, then batch by batch; P@n1 on one replica"},
	{"lag", "GROUP", true, false, false, "a consumer group's lag: each partition's high-water mark minus the group's committed offset, summed, as Kafka counts it (on a compacted topic that includes offsets a pass emptied, which records(P) does not); lag(GROUP, TOPIC/N) on one partition"},
	{"lag_seconds", "GROUP", true, false, false, "a consumer group's lag in seconds; lag_seconds(GROUP, TOPIC/N) on one partition"},
	{"delivered", "GROUP", true, false, false, "messages handed to a consumer group's clients, or a queue's (its SQS clients' too), repeats included"},
	{"processed", "GROUP|CLIENT", true, false, false, "distinct messages a consumer group's clients, or a queue's workers, finished their work on; processed(CLIENT) the messages one consumer or worker finished, a repeat included"},
	{"depth", "QUEUE", true, false, false, "a queue's messages: ready + in flight + delayed"},
	{"inflight", "QUEUE", true, false, false, "a queue's messages in flight"},
	{"oldest_age", "QUEUE", true, false, false, "the age in seconds of a queue's oldest message"},
	{"stale_acks", "QUEUE", true, false, false, "acks a queue's workers sent that it refused because their delivery was no longer the latest: the message had been received again"},
	{"renewals", "QUEUE", true, false, false, "times a queue accepted a new visibility deadline for a message in flight (SQS's ChangeMessageVisibility): from the lab's workers with extend= and from SQS clients"},
	{"throughput", "GROUP|QUEUE", true, false, false, "messages per second a group's consumers or a queue's workers finished over the last second of lab time (readable once they have run unchanged that long)"},
	{"members", "GROUP", true, false, false, "members of a consumer group in its current generation"},
	{"generation", "GROUP", true, false, false, "a consumer group's generation: the coordinator starts a new one at every rebalance, so an unchanged generation means no rebalance happened"},
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
	{"threads", "checkout", true, false, false, "the request threads the checkout runs (its threads= option)"},
	{"sqs_answers", "NODE", false, false, false, "yes when NODE's SQS port (sqs listen) takes a connection now, no when nothing listens there"},
	{"sqs_reaches", "NODE, QUEUE", false, false, false, "what a request for QUEUE through NODE's SQS port gets now: yes when the node passes it to the queue's leader and that answers; unavailable when the node answers ServiceUnavailable (HTTP 503), as it does while the queue has no leader; refused when nothing listens there. It asks with a ChangeMessageVisibility for a receipt handle no message has, which changes nothing"},
	{"state", "X", false, false, false, "a node, client or service: up, down, crashed or stopped"},
	{"elapsed", "LOAD", true, false, false, "lab seconds since a load (named by its client or topic) began sending"},
	{"idle", "GROUP", true, false, false, "a consumer group's members that own no partition: more members than partitions"},
	{"owned", "GROUP", true, false, false, "partitions of a consumer group's topics that a member owns in its current generation: fewer than the partitions means some go unread"},
	{"partition_of", "TOPIC, KEY", true, false, false, "the partition KEY goes to in TOPIC: murmur2(KEY) % the topic's partition count"},
	{"workers", "GROUP", true, false, false, "clients of a consumer group or queue that finished work on at least one message"},
	{"requests", "CLIENT", true, false, false, "produce requests a client's last produce command sent, retries included: one per batch"},
	{"latency", "CLIENT", true, false, false, "milliseconds of lab time a produce request of a client's last produce command took, on average: one batch sent and answered"},
	{"recognised", "CLIENT", true, false, false, "messages of a client's last produce command that a partition recognised as a retry and answered with the original offset"},
	{"recognised_all", "CLIENT", true, false, false, "messages a client has produced so far, by produce commands and loads alike, that a partition recognised as a retry and answered with the original offset"},
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
	case v.Func == "partition_of" || v.Func == "sqs_reaches":
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
	case name == "sqs_reaches":
		node, queue, ok := twoNames(arg)
		if !ok || !nodeRe.MatchString(node) {
			return Value{}, errAt(argCol, "sqs_reaches(…) needs NODE, QUEUE, as in sqs_reaches(n2, receipts)")
		}
		v.Arg, v.Key = node, queue
		return v, nil
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

// twoNames reads the argument NAME, NAME; ok says both are names.
func twoNames(arg string) (a, b string, ok bool) {
	a, b, ok = strings.Cut(arg, ",")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	return a, b, ok && nameRe.MatchString(a) && nameRe.MatchString(b)
}

func parsePartitionOf(v Value, arg string, col int) (Value, *posError) {
	topic, key, ok := twoNames(arg)
	if !ok {
		return Value{}, errAt(col, "partition_of(…) needs TOPIC, KEY, as in partition_of(orders, 881); a key is letters, digits, '.', '_' or '-'")
	}
	v.Arg, v.Key = topic, key
	return v, nil
}

func parseSpeedup(v Value, arg string, col int) (Value, *posError) {
	a, b, ok := twoNames(arg)
	if !ok {
		return Value{}, errAt(col, "speedup(…) needs two clients, CLIENT, CLIENT, as in speedup(hundred, one): the first's produce rate over the second's")
	}
	if a == b {
		return Value{}, errAt(col, "speedup(%s, %s) compares a client with itself and is always 1; name two clients, as in speedup(hundred, one)", a, b)
	}
	v.Arg, v.Other = a, b
	return v, nil
}
