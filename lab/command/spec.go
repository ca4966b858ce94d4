package command

import (
	"fmt"
	"strings"
)

// Spec describes one command: how it is written, what it does and which
// options it takes. The parser, help and suggestions all read this table.
type Spec struct {
	Name    string // "kill", "topic create", "drop next reply"
	Args    string // what follows the name before the options: "NODE", "TOPIC"
	Summary string // one line for help
	Example string
	Options []Option
	// Traits says what kind of change the command makes.
	Traits Trait
	build  func(p *parser, s *Spec) (Command, *posError)
}

// Trait is a kind of change a command makes, for the callers that treat
// some commands apart: a recording accepts only clock commands, a lesson
// does not note a learner's read-only ones, and fault commands never wait
// behind another command.
type Trait uint8

const (
	// TraitReadOnly: the command reads the lab and changes nothing.
	TraitReadOnly Trait = 1 << iota
	// TraitClock: the command only paces lab time.
	TraitClock
	// TraitFault: the command breaks the cluster or mends it.
	TraitFault
	// TraitRepair: the command puts the cluster back as it was.
	TraitRepair
)

// TraitsOf returns the traits of a command, from its spec.
func TraitsOf(c Command) Trait {
	for _, s := range specs {
		if s.Name == c.Name() {
			return s.Traits
		}
	}
	return 0
}

// ReadOnly reports whether c changes nothing in the lab.
func ReadOnly(c Command) bool { return TraitsOf(c)&TraitReadOnly != 0 }

// Clock reports whether c only paces lab time.
func Clock(c Command) bool { return TraitsOf(c)&TraitClock != 0 }

// Fault reports whether c breaks or mends the cluster.
func Fault(c Command) bool { return TraitsOf(c)&TraitFault != 0 }

// Repair reports whether c puts the cluster back as it was.
func Repair(c Command) bool { return TraitsOf(c)&TraitRepair != 0 }

// Option is one key=value option of a command.
type Option struct {
	Key      string
	Arg      string // how the value is written: "N", "0|1|all", "DURATION"
	Help     string
	Required bool
	Group    string // "client options": shown once in the usage line
	parse    valueParser
}

// Usage is the command's one-line form: name, arguments, options.
func (s Spec) Usage() string {
	parts := []string{s.Name}
	if s.Args != "" {
		parts = append(parts, s.Args)
	}
	groups := map[string]bool{}
	for _, o := range s.Options {
		switch {
		case o.Group != "":
			if !groups[o.Group] {
				parts = append(parts, "["+o.Group+"]")
				groups[o.Group] = true
			}
		case o.Required:
			parts = append(parts, o.Key+"="+o.Arg)
		default:
			parts = append(parts, "["+o.Key+"="+o.Arg+"]")
		}
	}
	return strings.Join(parts, " ")
}

// Detail is the help for one command: usage, summary, example, options.
func (s Spec) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  %s\n  e.g. %s\n", s.Usage(), s.Summary, s.Example)
	for _, o := range s.Options {
		req := ""
		if o.Required {
			req = " (required)"
		}
		fmt.Fprintf(&b, "  %-22s %s%s\n", o.Key+"="+o.Arg, o.Help, req)
	}
	if s.Name == "wait" || s.Name == "expect" {
		b.WriteString("  a condition is VALUE OP VALUE (== != < <= > >=); a value is a number, a word, a checker field (lost, confirmed, …) or a lab value:\n")
		for _, f := range labFuncs {
			fmt.Fprintf(&b, "  %-22s %s\n", f.name+"("+f.arg+")", f.help)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Specs returns the table of commands, in the order help lists them.
func Specs() []Spec { return append([]Spec(nil), specs...) }

// Lookup finds a command's spec by its name ("topic create") or, failing
// that, by its first word ("topic").
func Lookup(name string) (Spec, bool) {
	name = strings.Join(strings.Fields(name), " ")
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	for _, s := range specs {
		if strings.Fields(s.Name)[0] == name {
			return s, true
		}
	}
	return Spec{}, false
}

// HelpText lists every command with its one-line summary. note, when not
// nil, may add a remark to a command (the lab marks what it cannot run yet).
func HelpText(note func(name string) string) string {
	var b strings.Builder
	width := 0
	for _, s := range specs {
		width = max(width, len(s.Name))
	}
	for _, s := range specs {
		line := fmt.Sprintf("%-*s  %s", width, s.Name, s.Summary)
		if note != nil {
			if n := note(s.Name); n != "" {
				line += " (" + n + ")"
			}
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\nhelp COMMAND explains one command and its options.")
	return b.String()
}

// firstWords lists the distinct first words of the commands, for suggestions.
func firstWords() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range specs {
		w := strings.Fields(s.Name)[0]
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func specNames() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

var (
	optAcks       = Option{Key: "acks", Arg: "0|1|all", Help: "when the leader answers: 0 never, 1 once it stored it, all once a majority holds it (default all)", parse: enum("0", "1", "all")}
	optIdempotent = Option{Key: "idempotent", Arg: "true|false", Help: "number batches so the partition drops a retried repeat (needs acks=all)", parse: parseBool}
	optAs         = Option{Key: "as", Arg: "CLIENT", Help: "the client that sends (default producer); a new name makes a new client", parse: parseName}
	optBatch      = Option{Key: "batch", Arg: "N", Help: "records per request (default 1)", parse: intIn(1, 10000)}
	optKey        = Option{Key: "key", Arg: "TEXT", Help: "the key; {n} is the message's number; the key picks the partition", parse: parseTemplate}
	optValue      = Option{Key: "value", Arg: "TEXT", Help: "the payload; {n} is the message's number (default: the message id)", parse: parseTemplate}
	optCount      = Option{Key: "count", Arg: "N", Help: "how many messages (default 1)", parse: intIn(1, 100000)}
)

var clientOptions = []Option{
	{Key: "rate", Arg: "N/s", Help: "messages processed per second of lab time", Group: "client options", parse: parseRate},
	{Key: "ack", Arg: "before|after", Help: "ack before the work (at most once) or after it (at least once, the default)", Group: "client options", parse: enum("before", "after")},
	{Key: "crash", Arg: "before-work|after-work", Help: "crash once, at this point of the first message that reaches it", Group: "client options", parse: enum("before-work", "after-work")},
	{Key: "fail", Arg: "transient:P|permanent|poison:TEXT", Help: "how the work fails: with probability P, always, or on payloads containing TEXT", Group: "client options", parse: parseFailure},
	{Key: "retry", Arg: "none|immediate|backoff", Help: "what a failure does next", Group: "client options", parse: enum("none", "immediate", "backoff")},
	{Key: "base", Arg: "DURATION", Help: "the first backoff", Group: "client options", parse: durationParser(true)},
	{Key: "cap", Arg: "DURATION", Help: "the longest backoff", Group: "client options", parse: durationParser(true)},
	{Key: "jitter", Arg: "full|equal|none", Help: "how backoffs are randomised", Group: "client options", parse: enum("full", "equal", "none")},
	{Key: "max-attempts", Arg: "N", Help: "attempts before the message goes to the DLQ", Group: "client options", parse: intIn(1, 1000)},
	{Key: "service", Arg: "payments|wallet", Help: "the work is this service's handling of the message (its result decides ack, retry or crash)", Group: "client options", parse: enum(HandlerServices...)},
	{Key: "work", Arg: "DURATION", Help: "how long the work on one message takes, in lab time (default: no time)", Group: "client options", parse: durationParser(true)},
}

// specs is every command the language has, in the order help lists them.
var specs = []Spec{
	{Name: "cluster", Summary: "(re)start an empty cluster", Example: "cluster nodes=3 timing=fast", build: buildCluster, Options: []Option{
		{Key: "nodes", Arg: "N", Help: "how many nodes, 1 to 9", Required: true, parse: intIn(1, 9)},
		{Key: "timing", Arg: "fast|classroom", Help: "raft timeouts: a fifth of a second, or a second to watch an election", parse: enum("fast", "classroom")},
	}},
	{Name: "topic create", Args: "TOPIC", Summary: "create a partitioned log", Example: "topic create orders partitions=3", build: buildTopicCreate, Options: []Option{
		{Key: "partitions", Arg: "N", Help: "how many partitions, each its own raft group", Required: true, parse: intIn(1, 64)},
		{Key: "rf", Arg: "N", Help: "replicas per partition (default 3, or fewer nodes)", parse: intIn(1, 9)},
		{Key: "segment", Arg: "N|SIZE|AGE", Help: "close a segment after N records, SIZE bytes, or when a record comes AGE after its first (default 16 records)", parse: parseSegment},
		{Key: "retention", Arg: "AGE|SIZE", Help: "delete closed segments older than AGE or beyond SIZE in total", parse: parseRetention},
		{Key: "cleanup", Arg: "delete|compact|compact,delete", Help: "Kafka's cleanup.policy: retention deletes old segments (delete, the default), or compaction keeps the newest record of each key (compact), or both", parse: enum("delete", "compact", "compact,delete")},
		{Key: "delete-retention", Arg: "DURATION", Help: "a compacted topic keeps a tombstone this long after its timestamp (Kafka's delete.retention.ms; default 1 day)", parse: durationParser(true)},
		{Key: "cleaner", Arg: "auto|manual", Help: "auto: a compaction pass runs when half the closed segments' bytes are new since the last (Kafka's min.cleanable.dirty.ratio 0.5); manual: only the compact command runs one", parse: enum("auto", "manual")},
	}},
	{Name: "queue create", Args: "QUEUE", Summary: "create a work queue", Example: "queue create receipts visibility=5s max-receives=5 dlq=receipts-dlq", build: buildQueueCreate, Options: []Option{
		{Key: "rf", Arg: "N", Help: "replicas (default 3, or fewer nodes)", parse: intIn(1, 9)},
		{Key: "visibility", Arg: "DURATION", Help: "how long a received message stays hidden before it comes back", parse: durationParser(true)},
		{Key: "max-receives", Arg: "N", Help: "receives before a message goes to the DLQ", parse: intIn(1, 1000)},
		{Key: "dlq", Arg: "QUEUE", Help: "the dead-letter queue", parse: parseName},
		{Key: "max-length", Arg: "N", Help: "hold at most N messages (back-pressure); overflow= says what a send beyond them does", parse: intIn(1, 1000000)},
		{Key: "overflow", Arg: "reject|drop-head", Help: "a send to a full queue is refused (reject, the default), or the oldest ready message is dropped to make room (drop-head, RabbitMQ's default)", parse: enum("reject", "drop-head")},
		{Key: "ttl", Arg: "DURATION", Help: "drop messages older than this", parse: durationParser(true)},
		{Key: "fifo", Arg: "true|false", Help: "each message group in the order sent, one of a group in flight at a time; a repeated dedupe-id within 5 minutes is dropped (SQS's FIFO queues)", parse: parseBool},
	}},
	{Name: "queue delete", Args: "QUEUE", Summary: "delete a work queue and drop the messages it holds, as SQS's DeleteQueue", Example: "queue delete receipts", build: buildQueueDelete},
	{Name: "produce", Args: "TOPIC", Summary: "write messages to a topic and wait for their outcomes", Example: `produce orders key=881 value="order 881 placed" acks=all`, build: buildProduce, Options: []Option{
		optKey, optValue, optAcks, optIdempotent, optCount, optAs, optBatch,
		{Key: "partition", Arg: "N", Help: "write to this partition instead of the key's", parse: intIn(0, 63)},
		{Key: "tombstone", Arg: "true|false", Help: "a null value: on a compacted topic it deletes the key once compaction passes it", parse: parseBool},
	}},
	{Name: "send", Args: "QUEUE", Summary: "put messages on a queue", Example: `send receipts value="receipt 881"`, build: buildSend, Options: []Option{
		optValue,
		{Key: "key", Arg: "TEXT", Help: "a key the message carries, e.g. its order id ({n} is the message's number); a queue keeps no order by it", parse: parseTemplate},
		{Key: "delay", Arg: "DURATION", Help: "keep it invisible this long first", parse: durationParser(false)},
		optCount, optAs,
		{Key: "group", Arg: "TEXT", Help: "a FIFO queue's message group, delivered in order ({n} is the message's number)", parse: parseTemplate},
		{Key: "dedupe-id", Arg: "TEXT", Help: "a FIFO queue drops a repeat of this id within 5 minutes ({n} likewise)", parse: parseTemplate},
	}},
	{Name: "load", Args: "TOPIC|QUEUE", Summary: "produce (or send, to a queue) in the background at a rate for a while", Example: "load orders rate=1000/s for=60s key=order-{n}", build: buildLoad, Options: []Option{
		{Key: "rate", Arg: "N/s", Help: "messages per second of lab time", Required: true, parse: parseRate},
		{Key: "for", Arg: "DURATION", Help: "how long, in lab time", Required: true, parse: durationParser(true)},
		{Key: "after", Arg: "DURATION", Help: "start this much lab time from now", parse: durationParser(false)},
		optKey, optValue, optAcks, optIdempotent,
		{Key: "as", Arg: "CLIENT", Help: "the client that sends (default load)", parse: parseName},
		optBatch,
	}},
	{Name: "load stop", Args: "[TOPIC|CLIENT]", Summary: "stop background generators (all of them without a name)", Example: "load stop orders", build: buildLoadStop},
	{Name: "consumer", Args: "start|restart|stop CLIENT", Summary: "run a consumer of a topic in a group", Example: "consumer start billing-1 group=billing topic=orders ack=after", build: buildConsumer, Options: append([]Option{
		{Key: "group", Arg: "GROUP", Help: "the consumer group (required to start)", parse: parseName},
		{Key: "topic", Arg: "TOPIC", Help: "the topic to read (required to start)", parse: parseName},
		{Key: "from", Arg: "earliest|latest", Help: "where a new group starts (default earliest)", parse: enum("earliest", "latest")},
		{Key: "session", Arg: "DURATION", Help: "the group's session timeout (default: the timing preset's)", parse: durationParser(true)},
		{Key: "commit", Arg: "each|poll", Help: "commit after each record's work (default), or once per poll after the work on all its records", parse: enum("each", "poll")},
		{Key: "retry-topic", Arg: "TOPIC", Help: "a record failed past its attempts is produced there (same key and message id), then committed past", parse: parseName},
	}, clientOptions...)},
	{Name: "worker", Args: "start|restart|stop CLIENT", Summary: "run a worker on a queue", Example: "worker start w1 queue=receipts rate=400/s", build: buildWorker, Options: append([]Option{
		{Key: "queue", Arg: "QUEUE", Help: "the queue to work on (required to start)", parse: parseName},
		{Key: "extend", Arg: "DURATION", Help: "while the work lasts, keep the message hidden this much longer, renewed every half of it (SQS's ChangeMessageVisibility)", parse: durationParser(true)},
	}, clientOptions...)},
	{Name: "service", Args: "start|restart|stop SERVICE", Summary: "run a simulated service: " + orList(Services) + "; restart brings a crashed one back with its database", Example: "service start orders mode=outbox", build: buildService, Options: []Option{
		{Key: "mode", Arg: "MODE", Help: "orders: commit-then-publish|publish-then-commit|outbox; checkout: sync|queued", parse: parseText},
		{Key: "strategy", Arg: "STRATEGY", Help: "wallet: none|dedupe-table|dedupe-elsewhere|conditional|absolute", parse: parseText},
		{Key: "threads", Arg: "N", Help: "checkout: request threads", parse: intIn(1, 1000)},
		{Key: "receipt", Arg: "DURATION", Help: "checkout: how long each call to the receipt service takes (default 100ms; 3s on a bad day)", parse: durationParser(true)},
		{Key: "writes", Arg: "N/s", Help: "a ceiling on the database's writes per second", parse: parseRate},
		{Key: "crash", Arg: "POINT", Help: "crash once at this point of the service's work (also on restart)", parse: parseName},
	}},
	{Name: "order", Args: "ID", Summary: "place orders through the orders service and wait for what it did", Example: "order 881 amount=450", build: buildOrder, Options: []Option{
		{Key: "user", Arg: "N", Help: "the customer (default 42); customers 1 to 1000 exist, another fails the commit", parse: intIn(1, 1000000000)},
		{Key: "amount", Arg: "N", Help: "the price in ₹ (default 450)", parse: intIn(1, 100000000)},
		{Key: "item", Arg: "TEXT", Help: "what was bought (default phone)", parse: parseItem},
		{Key: "count", Arg: "N", Help: "how many orders, numbered from ID up (default 1)", parse: intIn(1, 100000)},
	}},
	{Name: "buyers", Summary: "send buyers through the checkout service in the background, at a rate for a while", Example: "buyers rate=10/s for=5s", build: buildBuyers, Options: []Option{
		{Key: "rate", Arg: "N/s", Help: "buyers arriving per second of lab time", Required: true, parse: parseRate},
		{Key: "for", Arg: "DURATION", Help: "how long they keep arriving, in lab time", Required: true, parse: durationParser(true)},
		{Key: "amount", Arg: "N", Help: "what each buyer pays in ₹ (default 450)", parse: intIn(1, 100000000)},
	}},
	{Name: "buyers stop", Summary: "stop the buyers still to arrive; those at the checkout get their answers", Example: "buyers stop", build: buildBuyersStop},
	{Name: "seek", Args: "GROUP TOPIC/P", Summary: "move a group's position on a partition", Example: "seek billing orders/0 to=earliest", build: buildSeek, Options: []Option{
		{Key: "to", Arg: "OFFSET|earliest|latest|TIME", Help: "an offset, earliest, latest, a time (RFC 3339) or a time ago (-5m)", Required: true, parse: parseSeekTo},
	}},
	{Name: "redrive", Args: "DLQ", Summary: "move a dead-letter queue's messages back", Example: "redrive receipts-dlq to=receipts", build: buildRedrive, Options: []Option{
		{Key: "to", Arg: "QUEUE", Help: "where to (default: the queue they came from)", parse: parseName},
	}},
	{Name: "elect", Args: "NODE PARTITION", Summary: "move leadership to a node and wait until it leads", Example: "elect n2 orders/0", build: buildElect, Options: []Option{
		{Key: "epoch", Arg: "N", Help: "move leadership round the replicas, one election each, until NODE leads at epoch N", parse: intIn(1, 1000)},
	}},
	{Name: "kill", Traits: TraitFault, Args: "NODE", Summary: "stop a node as if its process died (its disk stays)", Example: "kill leader(orders/0)", build: buildNode(func(n NodeRef) Command { return Kill{n} })},
	{Name: "crash", Traits: TraitFault, Args: "NODE torn", Summary: "kill a node in the middle of a write: its last batches are left half written on disk", Example: "crash n2 torn", build: buildCrash},
	{Name: "restart", Traits: TraitFault | TraitRepair, Args: "NODE", Summary: "bring a killed node back from its disk", Example: "restart n1", build: buildNode(func(n NodeRef) Command { return Restart{n} })},
	{Name: "isolate", Traits: TraitFault, Args: "NODE", Summary: "cut every link of a node: peers and clients", Example: "isolate leader(orders/0)", build: buildNode(func(n NodeRef) Command { return Isolate{n} })},
	{Name: "partition", Traits: TraitFault, Args: "SIDE | SIDE [| SIDE]", Summary: "cut node-to-node links between the sides; clients still reach every node", Example: "partition n1 | n2,n3", build: buildPartition},
	{Name: "slow", Traits: TraitFault, Args: "NODE LATENCY|off", Summary: "add latency to every message to or from a node", Example: "slow n1 200ms", build: buildSlow},
	{Name: "heal", Traits: TraitFault | TraitRepair, Summary: "restore every link and undo slow", Example: "heal", build: buildBare(Heal{})},
	{Name: "stall", Traits: TraitFault, Args: "CONSUMER", Summary: "freeze a consumer as a long pause of its process does: no heartbeat, no poll, no work, for a stretch of lab time", Example: "stall billing-2 for=1500ms", build: buildStall, Options: []Option{
		{Key: "for", Arg: "DURATION", Help: "how long, in lab time, up to 5m", Required: true, parse: durationParser(true)},
	}},
	{Name: "drop next reply", Traits: TraitFault, Args: "to CLIENT", Summary: "the broker does CLIENT's next request, CLIENT never hears back (it retries); a refusal (not the leader) still gets through", Example: "drop next reply to producer", build: buildDrop("to", func(c string) Command { return DropReply{c} })},
	{Name: "drop next ack", Traits: TraitFault, Args: "from CLIENT", Summary: "CLIENT's next ack, delete or offset commit never arrives", Example: "drop next ack from w1", build: buildDrop("from", func(c string) Command { return DropAck{c} })},
	{Name: "kafka listen", Summary: "speak the Kafka protocol on every node (nI on port+I-1), for kcat and other real clients", Example: "kafka listen port=9092", build: buildKafkaListen, Options: []Option{
		{Key: "port", Arg: "PORT", Help: "n1's port (default 9092); 0 picks free ports", parse: intIn(0, 65535)},
		{Key: "host", Arg: "HOST", Help: "the address to bind (default 127.0.0.1; the protocol has no authentication)", parse: parseText},
		{Key: "auto-create", Arg: "true|false", Help: "create a topic a client names that does not exist (default false)", parse: parseBool},
	}},
	{Name: "kafka stop", Summary: "stop the Kafka listeners and drop their clients", Example: "kafka stop", build: buildBare(KafkaStop{})},
	{Name: "sqs listen", Summary: "answer Amazon SQS's API on every node (nI on port+I-1), for boto3, the AWS CLI and the SDKs", Example: "sqs listen port=9324", build: buildSQSListen, Options: []Option{
		{Key: "port", Arg: "PORT", Help: "n1's port (default 9324); 0 picks free ports", parse: intIn(0, 65535)},
		{Key: "host", Arg: "HOST", Help: "the address to bind (default 127.0.0.1; requests are not authenticated)", parse: parseText},
	}},
	{Name: "sqs stop", Summary: "stop the SQS listeners and drop their clients", Example: "sqs stop", build: buildBare(SQSStop{})},
	{Name: "speed", Traits: TraitClock, Args: "FACTORx", Summary: "run lab time faster or slower than the wall clock", Example: "speed 10x", build: buildSpeed},
	{Name: "pause", Traits: TraitClock, Summary: "stop lab time, now or after a stretch of it", Example: "pause in=10s", build: buildPause, Options: []Option{
		{Key: "in", Arg: "DURATION", Help: "let this much lab time pass first, then stop it exactly there (the command returns once it has)", parse: durationParser(true)},
	}},
	{Name: "resume", Traits: TraitClock, Summary: "start lab time again", Example: "resume", build: buildBare(Resume{})},
	{Name: "wait", Traits: TraitReadOnly, Args: "CONDITION", Summary: "wait until a condition holds (timeout in wall-clock time)", Example: "wait leader(orders/0) != n1 timeout=10s", build: buildWait, Options: []Option{
		{Key: "timeout", Arg: "DURATION", Help: "give up after this long (default 10s)", parse: durationParser(true)},
	}},
	{Name: "expect", Traits: TraitReadOnly, Args: "CONDITION", Summary: "check that a condition holds now", Example: "expect lost == 0", build: buildExpect},
	{Name: "check", Args: "[why [FIELD]]", Traits: TraitReadOnly, Summary: "drain, then print the checker's report; why lists the records behind a count",
		Example: "check why order_violations", build: buildCheck},
	{Name: "help", Traits: TraitReadOnly, Args: "[COMMAND]", Summary: "list the commands, or explain one", Example: "help produce"}, // build: see init
	{Name: "sql", Traits: TraitReadOnly, Args: `SERVICE "QUERY"`, Summary: "run a read-only query on a service's database", Example: `sql orders "SELECT * FROM outbox"`, build: buildSQL},
	{Name: "log files", Traits: TraitReadOnly, Args: "PARTITION on NODE", Summary: "list a replica's segment files: names, sizes, offsets", Example: "log files orders/0 on n2", build: buildLogFiles},
	{Name: "log dump", Traits: TraitReadOnly, Args: "FILE", Summary: "print a segment file's batches as kafka-dump-log does (FILE as log files names it)", Example: "log dump n2/orders-0/00000000000000000000.log", build: buildLogDump, Options: []Option{
		{Key: "records", Arg: "true|false", Help: "print every record under its batch too (default false)", parse: parseBool},
	}},
	{Name: "compact", Args: "PARTITION", Summary: "run one compaction pass on a partition of a compacted topic now", Example: "compact accounts/0", build: buildCompact},
}

// help's builder looks commands up in specs, so it joins the table once
// the table exists.
func init() {
	for i := range specs {
		if specs[i].Name == "help" {
			specs[i].build = buildHelp
		}
	}
}
