package command

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	nodeRe = regexp.MustCompile(`^n[1-9][0-9]?$`)
	// identRe is an SQL table name.
	identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// Target is what a node reference or a lab value points at: a partition
// (orders/0) or a queue (receipts).
type Target struct {
	Name        string
	Partition   int
	IsPartition bool
}

func (t Target) String() string {
	if t.IsPartition {
		return t.Name + "/" + strconv.Itoa(t.Partition)
	}
	return t.Name
}

// parseTarget reads orders/0 or receipts.
func parseTarget(s string) (Target, error) {
	name, part, hasPart := strings.Cut(s, "/")
	if !nameRe.MatchString(name) {
		return Target{}, fmt.Errorf("%q is not a partition or queue; write TOPIC/N (orders/0) or a queue name (receipts)", s)
	}
	if !hasPart {
		return Target{Name: name}, nil
	}
	p, err := strconv.Atoi(part)
	if err != nil || p < 0 || p > 9999 || strconv.Itoa(p) != part {
		return Target{}, fmt.Errorf("%q: the partition after '/' must be a number ≥ 0, as in orders/0", s)
	}
	return Target{Name: name, Partition: p, IsPartition: true}, nil
}

// Node reference kinds.
const (
	RefNode     = "node"     // n1
	RefLeader   = "leader"   // leader(orders/0), leader(receipts)
	RefFollower = "follower" // follower(orders/0): the first follower in node order
)

// NodeRef names a node, directly or through what it does now; the lab
// resolves it when the command runs.
type NodeRef struct {
	Kind string
	Node string // for RefNode
	Of   Target // for RefLeader and RefFollower
}

func (n NodeRef) String() string {
	if n.Kind == RefNode {
		return n.Node
	}
	return n.Kind + "(" + n.Of.String() + ")"
}

const nodeHelp = "write n1…n9, leader(orders/0), leader(receipts) or follower(orders/0)"

// parseNodeRef reads one node reference from a token.
func parseNodeRef(t token) (NodeRef, *posError) {
	s := t.text
	if fn, arg, ok := strings.Cut(s, "("); ok {
		if fn != RefLeader && fn != RefFollower {
			return NodeRef{}, errAt(t.col, "%q is not a way to name a node; %s", fn+"(", nodeHelp).withSuggest(nearest(fn, []string{RefLeader, RefFollower}))
		}
		if !strings.HasSuffix(arg, ")") {
			return NodeRef{}, errAt(t.col, "unexpected text after %s(…): %q", fn, s[strings.LastIndexByte(s, ')')+1:])
		}
		tg, err := parseTarget(strings.TrimSpace(strings.TrimSuffix(arg, ")")))
		if err != nil {
			return NodeRef{}, errAt(t.col+len([]rune(fn))+1, "%v", err)
		}
		return NodeRef{Kind: fn, Of: tg}, nil
	}
	if !nodeRe.MatchString(s) {
		return NodeRef{}, errAt(t.col, "%q is not a node; %s", s, nodeHelp).withSuggest(nearest(s, []string{RefLeader + "(", RefFollower + "("}))
	}
	return NodeRef{Kind: RefNode, Node: s}, nil
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int
}

func (tp TopicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(tp.Partition) }

// Failure is a client's failure kind: transient with a probability,
// permanent, or poison for payloads containing Text.
type Failure struct {
	Kind string  // "", "transient", "permanent" or "poison"
	Prob float64 // for transient
	Text string  // for poison
}

func (f Failure) String() string {
	switch f.Kind {
	case "transient":
		return "transient:" + formatFloat(f.Prob)
	case "poison":
		return "poison:" + f.Text
	}
	return f.Kind
}

// Seek target kinds.
const (
	SeekOffset   = "offset"
	SeekEarliest = "earliest"
	SeekLatest   = "latest"
	SeekTime     = "time" // an absolute time
	SeekAgo      = "ago"  // lab time before now
)

// SeekTo is where seek moves a group: an offset, the earliest or latest
// retained offset, the first record at or after a time, or one that long ago.
type SeekTo struct {
	Kind   string
	Offset int64
	Time   time.Time // UTC
	Ago    time.Duration
}

func (s SeekTo) String() string {
	switch s.Kind {
	case SeekOffset:
		return strconv.FormatInt(s.Offset, 10)
	case SeekTime:
		return s.Time.Format(time.RFC3339Nano)
	case SeekAgo:
		return "-" + formatDuration(s.Ago)
	}
	return s.Kind
}

// --- option values: each parser returns the typed value or says what it wants.

type valueParser func(v string) (any, error)

type enumError struct {
	msg     string
	suggest string
}

func (e *enumError) Error() string { return e.msg }

func intIn(lo, hi int) valueParser {
	return func(v string) (any, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return n, nil
	}
}

func durationParser(positive bool) valueParser {
	return func(v string) (any, error) {
		d, err := parseDuration(v)
		if err != nil || d < 0 || positive && d == 0 {
			if positive {
				return nil, fmt.Errorf("want a duration above zero, like 200ms, 5s or 10m")
			}
			return nil, fmt.Errorf("want a duration like 200ms, 5s or 10m")
		}
		return d, nil
	}
}

// parseDuration is time.ParseDuration, bounded to a day so that lab
// arithmetic cannot overflow.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	if d > 24*time.Hour || d < -24*time.Hour {
		return 0, fmt.Errorf("duration %s is over a day", v)
	}
	return d, nil
}

// parseRate reads N/s or N/m (per minute) as messages per second.
func parseRate(v string) (any, error) {
	num, unit, ok := strings.Cut(v, "/")
	per := 0.0
	switch unit {
	case "s", "sec":
		per = 1
	case "m", "min":
		per = 60
	}
	f, err := strconv.ParseFloat(num, 64)
	if !ok || per == 0 || err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f/per > 1e6 {
		return nil, fmt.Errorf("want a rate like 400/s or 30/m, above zero and at most 1000000/s")
	}
	return f / per, nil
}

// parseSize reads 512B, 4KB, 1MB or 1GB (powers of 1024) as bytes.
func parseSize(v string) (int64, bool) {
	up := strings.ToUpper(v)
	mult := int64(0)
	num := ""
	for _, u := range append(sizeUnits, struct {
		name  string
		bytes int64
	}{"B", 1}) {
		if strings.HasSuffix(up, u.name) {
			mult, num = u.bytes, v[:len(v)-len(u.name)]
			break
		}
	}
	if mult == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return 0, false
	}
	return n * mult, true
}

// Amount is a value that is either a count of records or a size in bytes
// (segment=16, segment=4KB), or either an age or a size (retention=10m,
// retention=1MB).
type Amount struct {
	Count int
	Bytes int64
	Age   time.Duration
}

func (a Amount) String() string {
	switch {
	case a.Bytes > 0:
		return formatSize(a.Bytes)
	case a.Age > 0:
		return formatDuration(a.Age)
	}
	return strconv.Itoa(a.Count)
}

func parseSegment(v string) (any, error) {
	if b, ok := parseSize(v); ok {
		return Amount{Bytes: b}, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= 1000000 {
		return Amount{Count: n}, nil
	}
	if d, err := parseDuration(v); err == nil && d > 0 {
		return Amount{Age: d}, nil
	}
	return nil, fmt.Errorf("want a record count like 16, a size like 4KB or an age like 10m")
}

func parseRetention(v string) (any, error) {
	if b, ok := parseSize(v); ok {
		return Amount{Bytes: b}, nil
	}
	if d, err := parseDuration(v); err == nil && d > 0 {
		return Amount{Age: d}, nil
	}
	return nil, fmt.Errorf("want an age like 10m or a size like 1MB")
}

func enum(values ...string) valueParser {
	return func(v string) (any, error) {
		for _, x := range values {
			if v == x {
				return v, nil
			}
		}
		return nil, &enumError{msg: "want " + orList(values), suggest: nearest(v, values)}
	}
}

func parseBool(v string) (any, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, &enumError{msg: "want true or false", suggest: nearest(v, []string{"true", "false"})}
}

func parseName(v string) (any, error) {
	if !nameRe.MatchString(v) {
		return nil, fmt.Errorf("want a name of 1–64 letters, digits, '.', '_' or '-'")
	}
	return v, nil
}

func parseText(v string) (any, error) { return v, nil }

// parseItem accepts the name of what an order bought.
func parseItem(v string) (any, error) {
	if strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > 64 {
		return nil, fmt.Errorf("want the item's name, 1 to 64 characters, like phone")
	}
	return v, nil
}

// parseTemplate accepts text in which {n} stands for the message's number.
func parseTemplate(v string) (any, error) {
	rest := v
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("a '{' is not closed; {n} is the only placeholder")
		}
		if ph := rest[i : i+j+1]; ph != "{n}" {
			return nil, fmt.Errorf("unknown placeholder %s; {n} (the message's number) is the only one", ph)
		}
		rest = rest[i+j+1:]
	}
	return v, nil
}

func parseFailure(v string) (any, error) {
	kind, arg, hasArg := strings.Cut(v, ":")
	switch kind {
	case "permanent":
		if hasArg {
			return nil, fmt.Errorf("permanent takes nothing after it")
		}
		return Failure{Kind: kind}, nil
	case "transient":
		p := 1.0
		if hasArg {
			f, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return nil, fmt.Errorf("transient:P needs a probability above 0 and at most 1, like transient:0.2")
			}
			p = f
		}
		return Failure{Kind: kind, Prob: p}, nil
	case "poison":
		if arg == "" {
			return nil, fmt.Errorf("poison needs the text that marks a poison payload, like poison:BAD")
		}
		return Failure{Kind: kind, Text: arg}, nil
	}
	kinds := []string{"transient", "permanent", "poison"}
	return nil, &enumError{msg: "want transient:P, permanent or poison:TEXT", suggest: nearest(kind, kinds)}
}

func parseSeekTo(v string) (any, error) {
	switch v {
	case SeekEarliest, SeekLatest:
		return SeekTo{Kind: v}, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return SeekTo{Kind: SeekOffset, Offset: n}, nil
	}
	if strings.HasPrefix(v, "-") {
		if d, err := parseDuration(v[1:]); err == nil && d > 0 {
			return SeekTo{Kind: SeekAgo, Ago: d}, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return SeekTo{Kind: SeekTime, Time: t.UTC()}, nil
	}
	return nil, &enumError{msg: "want an offset, earliest, latest, a time like 2024-05-01T10:00:00Z or a time ago like -5m",
		suggest: nearest(v, []string{SeekEarliest, SeekLatest})}
}
