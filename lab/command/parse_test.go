package command

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every command of the core language parses, and prints back in a form
// that parses to the same command.
func TestParseValidLines(t *testing.T) {
	cases := []parseCase{
		{"cluster nodes=3", Cluster{Nodes: 3}},
		{"cluster nodes=5 timing=classroom", Cluster{Nodes: 5, Timing: "classroom"}},
		{"topic create orders partitions=3", TopicCreate{Topic: "orders", Partitions: 3}},
		{"topic create orders partitions=3 rf=3 segment=4KB retention=10m", TopicCreate{Topic: "orders", Partitions: 3, RF: 3, Segment: Amount{Bytes: 4096}, Retention: Amount{Age: 10 * time.Minute}}},
		{"topic create logs partitions=1 segment=16 retention=1MB", TopicCreate{Topic: "logs", Partitions: 1, Segment: Amount{Count: 16}, Retention: Amount{Bytes: 1 << 20}}},
		{"topic create logs partitions=1 segment=1m", TopicCreate{Topic: "logs", Partitions: 1, Segment: Amount{Age: time.Minute}}},
		{"topic create accounts partitions=1 retention=1h cleanup=compact,delete delete-retention=30s cleaner=manual",
			TopicCreate{Topic: "accounts", Partitions: 1, Retention: Amount{Age: time.Hour}, Cleanup: "compact,delete", DeleteRetention: 30 * time.Second, Cleaner: "manual"}},
		{"compact accounts/0", Compact{Partition: Target{Name: "accounts", Partition: 0, IsPartition: true}}},
		{"produce accounts key=alice tombstone=true", Produce{Topic: "accounts", Key: "alice", Keyed: true, Tombstone: true, Count: 1, Batch: 1}},
		{"queue create receipts rf=3 visibility=5s max-receives=5 dlq=receipts-dlq max-length=100 ttl=1m",
			QueueCreate{Queue: "receipts", RF: 3, Visibility: 5 * time.Second, MaxReceives: 5, DLQ: "receipts-dlq", MaxLength: 100, TTL: time.Minute}},
		{`produce orders key=881 value="order 881 placed" acks=all idempotent=true count=3 as=shop batch=2`,
			Produce{Topic: "orders", Key: "881", Keyed: true, Value: "order 881 placed", HasValue: true, Acks: "all", Idempotent: true, Count: 3, As: "shop", Batch: 2}},
		{"produce orders", Produce{Topic: "orders", Count: 1, Batch: 1}},
		{"produce orders key=order-{n} count=10 partition=2", Produce{Topic: "orders", Key: "order-{n}", Keyed: true, Count: 10, Batch: 1, Partition: 2, Pinned: true}},
		{`send receipts value="receipt 881" delay=2s count=2 as=shop`, Send{Queue: "receipts", Value: "receipt 881", HasValue: true, Delay: 2 * time.Second, Count: 2, As: "shop"}},
		{"load orders rate=1000/s for=60s key=order-{n} acks=all", Load{Topic: "orders", Rate: 1000, For: time.Minute, Key: "order-{n}", Keyed: true, Acks: "all", Batch: 1}},
		{"load orders rate=60/m for=10s after=5s", Load{Topic: "orders", Rate: 1, For: 10 * time.Second, After: 5 * time.Second, Batch: 1}},
		{"load orders rate=20/m for=1m", Load{Topic: "orders", Rate: 20.0 / 60, For: time.Minute, Batch: 1}},
		{"load stop", LoadStop{}},
		{"crash n2 torn", Crash{Node: NodeRef{Kind: RefNode, Node: "n2"}, Torn: true}},
		{"log files orders/0 on leader(orders/0)", LogFiles{Partition: Target{Name: "orders", Partition: 0, IsPartition: true}, Node: NodeRef{Kind: RefLeader, Of: Target{Name: "orders", IsPartition: true}}}},
		{"log dump n2/orders-0/00000000000000000016.log records=true", LogDump{File: "n2/orders-0/00000000000000000016.log", Records: true}},
		{"load stop orders", LoadStop{Target: "orders"}},
		{"consumer start c1 group=billing topic=orders ack=before crash=after-work fail=transient:0.2 retry=backoff base=1s cap=5m jitter=full max-attempts=5 rate=400/s",
			Consumer{Action: "start", Client: "c1", Group: "billing", Topic: "orders", Options: ClientOptions{Rate: 400, Ack: "before", Crash: "after-work",
				Fail: Failure{Kind: "transient", Prob: 0.2}, Retry: "backoff", Base: time.Second, Cap: 5 * time.Minute, Jitter: "full", MaxAttempts: 5}}},
		{"consumer start cashback-1 group=cashback topic=cashbacks service=wallet ack=after crash=after-work from=latest session=2s",
			Consumer{Action: "start", Client: "cashback-1", Group: "cashback", Topic: "cashbacks", From: "latest", Session: 2 * time.Second,
				Options: ClientOptions{Ack: "after", Crash: "after-work", Service: "wallet"}}},
		{"consumer stop c1", Consumer{Action: "stop", Client: "c1"}},
		{"consumer restart c1", Consumer{Action: "restart", Client: "c1"}},
		{`worker start w1 queue=receipts fail="poison:bad order"`, Worker{Action: "start", Client: "w1", Queue: "receipts", Options: ClientOptions{Fail: Failure{Kind: "poison", Text: "bad order"}}}},
		{"service start orders mode=outbox crash=after-publish", Service{Action: "start", Service: "orders", Mode: "outbox", Crash: "after-publish"}},
		{"service start wallet strategy=dedupe-table writes=50/s", Service{Action: "start", Service: "wallet", Strategy: "dedupe-table", Writes: 50}},
		{"service start checkout mode=sync threads=8", Service{Action: "start", Service: "checkout", Mode: "sync", Threads: 8}},
		{"service start checkout mode=queued threads=8 receipt=3s", Service{Action: "start", Service: "checkout", Mode: "queued", Threads: 8, Receipt: 3 * time.Second}},
		{"buyers rate=10/s for=5s", Buyers{Rate: 10, For: 5 * time.Second}},
		{"buyers rate=30/m for=1m amount=1200", Buyers{Rate: 0.5, For: time.Minute, Amount: 1200}},
		{"buyers stop", BuyersStop{}},
		{"expect p99(checkout) < 1", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "p99", Arg: "checkout"}}, Op: "<", Right: Expr{Value: Value{Kind: ValNumber, Num: 1}}}}},
		{"service restart orders", Service{Action: "restart", Service: "orders"}},
		{"service restart orders crash=before-mark", Service{Action: "restart", Service: "orders", Crash: "before-mark"}},
		{"service stop wallet", Service{Action: "stop", Service: "wallet"}},
		{"order 881", Order{ID: 881, Count: 1}},
		{`order 881 user=7 amount=450 item="blue phone" count=3`, Order{ID: 881, User: 7, Amount: 450, Item: "blue phone", HasItem: true, Count: 3}},
		{"seek billing orders/0 to=earliest", Seek{Group: "billing", Partition: TopicPartition{"orders", 0}, To: SeekTo{Kind: SeekEarliest}}},
		{"seek billing orders/1 to=1500", Seek{Group: "billing", Partition: TopicPartition{"orders", 1}, To: SeekTo{Kind: SeekOffset, Offset: 1500}}},
		{"seek billing orders/1 to=-5m", Seek{Group: "billing", Partition: TopicPartition{"orders", 1}, To: SeekTo{Kind: SeekAgo, Ago: 5 * time.Minute}}},
		{"seek billing orders/1 to=2024-05-01T10:00:00Z", Seek{Group: "billing", Partition: TopicPartition{"orders", 1}, To: SeekTo{Kind: SeekTime, Time: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)}}},
		{"redrive receipts-dlq to=receipts", Redrive{DLQ: "receipts-dlq", To: "receipts"}},
		{"elect n2 orders/0", Elect{Node: NodeRef{Kind: RefNode, Node: "n2"}, Target: Target{Name: "orders", Partition: 0, IsPartition: true}}},
		{"elect follower(orders/0) orders/0", Elect{Node: NodeRef{Kind: RefFollower, Of: Target{Name: "orders", IsPartition: true}}, Target: Target{Name: "orders", IsPartition: true}}},
		{"kill leader(orders/0)", Kill{NodeRef{Kind: RefLeader, Of: Target{Name: "orders", IsPartition: true}}}},
		{"kill leader(receipts)", Kill{NodeRef{Kind: RefLeader, Of: Target{Name: "receipts"}}}},
		{"restart n1", Restart{NodeRef{Kind: RefNode, Node: "n1"}}},
		{"isolate follower(orders/2)", Isolate{NodeRef{Kind: RefFollower, Of: Target{Name: "orders", Partition: 2, IsPartition: true}}}},
		{"partition n1 | n2,n3", Partition{Sides: [][]NodeRef{{{Kind: RefNode, Node: "n1"}}, {{Kind: RefNode, Node: "n2"}, {Kind: RefNode, Node: "n3"}}}}},
		{"partition n1|n2|n3,n4", Partition{Sides: [][]NodeRef{{{Kind: RefNode, Node: "n1"}}, {{Kind: RefNode, Node: "n2"}}, {{Kind: RefNode, Node: "n3"}, {Kind: RefNode, Node: "n4"}}}}},
		{"slow n1 200ms", Slow{Node: NodeRef{Kind: RefNode, Node: "n1"}, Latency: 200 * time.Millisecond}},
		{"slow n1 off", Slow{Node: NodeRef{Kind: RefNode, Node: "n1"}}},
		{"heal", Heal{}},
		{"kafka listen", KafkaListen{}},
		{"kafka listen port=19092 host=0.0.0.0 auto-create=true", KafkaListen{Port: 19092, Host: "0.0.0.0", AutoCreate: true}},
		{"kafka stop", KafkaStop{}},
		{"kafka listen port=0", KafkaListen{Port: AnyPort}},
		{"drop next reply to producer", DropReply{"producer"}},
		{"drop next ack from w1", DropAck{"w1"}},
		{"speed 10x", Speed{10}},
		{"pause", Pause{}},
		{"resume", Resume{}},
		{"wait leader(orders/0) != n1 timeout=5s", Wait{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "leader", Target: Target{Name: "orders", IsPartition: true}}}, Op: "!=", Right: Expr{Value: Value{Kind: ValWord, Word: "n1"}}}, Timeout: 5 * time.Second}},
		{"expect lost == 0", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValField, Word: "lost"}}, Op: "==", Right: Expr{Value: Value{Kind: ValNumber}}}}},
		{"expect epoch(orders/0) == epoch(orders/0@n1) + 1", Expect{Cond: Condition{
			Left: Expr{Value: Value{Kind: ValLab, Func: "epoch", Target: Target{Name: "orders", IsPartition: true}}}, Op: "==",
			Right: Expr{Value: Value{Kind: ValLab, Func: "epoch", Target: Target{Name: "orders", IsPartition: true}, Node: "n1"}, Offset: 1}}}},
		{"expect position(orders/0@n2, 17) == segment(orders/0)", Expect{Cond: Condition{
			Left: Expr{Value: Value{Kind: ValLab, Func: "position", Target: Target{Name: "orders", Partition: 0, IsPartition: true}, Node: "n2", At: 17, HasAt: true}}, Op: "==",
			Right: Expr{Value: Value{Kind: ValLab, Func: "segment", Target: Target{Name: "orders", Partition: 0, IsPartition: true}}}}}},
		{"expect epoch(orders/0@n1, 1500) < epoch(orders/0, 1500)", Expect{Cond: Condition{
			Left: Expr{Value: Value{Kind: ValLab, Func: "epoch", Target: Target{Name: "orders", IsPartition: true}, Node: "n1", At: 1500, HasAt: true}}, Op: "<",
			Right: Expr{Value: Value{Kind: ValLab, Func: "epoch", Target: Target{Name: "orders", IsPartition: true}, At: 1500, HasAt: true}}}}},
		{"expect rows(orders.outbox, status='pending') >= 2", Expect{Cond: Condition{
			Left: Expr{Value: Value{Kind: ValLab, Func: "rows", Service: "orders", Table: "outbox", Where: "status='pending'"}}, Op: ">=", Right: Expr{Value: Value{Kind: ValNumber, Num: 2}}}}},
		{"wait lag(billing)<=0", Wait{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "lag", Arg: "billing"}}, Op: "<=", Right: Expr{Value: Value{Kind: ValNumber}}}, Timeout: 10 * time.Second}},
		{"expect state(n1) == down", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "state", Arg: "n1"}}, Op: "==", Right: Expr{Value: Value{Kind: ValWord, Word: "down"}}}}},
		{"check", Check{}},
		{"check why", Check{Why: true}},
		{"check why order_violations", Check{Why: true, Field: "order_violations"}},
		{"help", Help{}},
		{"help topic create", Help{Topic: "topic create"}},
		{`sql orders "SELECT * FROM outbox WHERE status='pending'"`, SQL{Service: "orders", Query: "SELECT * FROM outbox WHERE status='pending'"}},
		{"  kill n3   # the follower", Kill{NodeRef{Kind: RefNode, Node: "n3"}}},
	}
	parsesTo(t, cases)
}

func TestBlankAndCommentLines(t *testing.T) {
	for _, line := range []string{"", "   ", "\t", "# a comment", "   # indented comment"} {
		c, err := ParseLine(3, line)
		if c != nil || err != nil {
			t.Errorf("%q: got %v, %v; want nothing", line, c, err)
		}
	}
	if _, err := Parse("# only a comment"); err == nil {
		t.Error("Parse of a comment-only line should say a command was expected")
	}
}

// Every command in the table is reachable by its name and listed by help.
func TestHelpListsEveryCommand(t *testing.T) {
	text := HelpText(nil)
	for _, s := range Specs() {
		if !strings.Contains(text, s.Name+" ") {
			t.Errorf("help does not list %q", s.Name)
		}
		if _, err := Parse(s.Example); err != nil {
			t.Errorf("the example of %q does not parse: %v", s.Name, err)
		}
		if c, _ := Parse(s.Example); c != nil && c.Name() != s.Name {
			t.Errorf("the example of %q parses as %q", s.Name, c.Name())
		}
		if _, err := Parse("help " + s.Name); err != nil {
			t.Errorf("help %s: %v", s.Name, err)
		}
	}
	noted := HelpText(func(name string) string {
		if name == "send" {
			return "not available yet"
		}
		return ""
	})
	if !strings.Contains(noted, "put messages on a queue (not available yet)") {
		t.Errorf("help does not show the lab's note:\n%s", noted)
	}
}

// help wait and help expect explain every lab value a condition can read.
func TestHelpExplainsEveryLabValue(t *testing.T) {
	for _, name := range []string{"wait", "expect"} {
		s, _ := Lookup(name)
		text := s.Detail()
		for _, f := range labFuncs {
			if !strings.Contains(text, f.name+"("+f.arg+")") || !strings.Contains(text, f.help) {
				t.Errorf("help %s does not explain %s(%s)", name, f.name, f.arg)
			}
		}
	}
}

// The core command names are exactly these: lessons and scripts rely on them.
func TestCoreNames(t *testing.T) {
	want := []string{"cluster", "topic create", "queue create", "produce", "send", "load", "load stop", "consumer", "worker", "service",
		"seek", "redrive", "elect", "kill", "crash", "restart", "isolate", "partition", "slow", "heal", "stall", "drop next reply", "drop next ack", "kafka listen", "kafka stop", "sqs listen", "sqs stop",
		"speed", "pause", "resume", "wait", "expect", "check", "help", "sql", "log files", "log dump", "compact"}
	// Added to the core: orders placed through the orders service.
	want = append(want[:10], append([]string{"order"}, want[10:]...)...)
	// And buyers sent through the checkout.
	want = append(want[:11], append([]string{"buyers", "buyers stop"}, want[11:]...)...)
	// And queues deleted as SQS clients delete them.
	want = append(want[:3], append([]string{"queue delete"}, want[3:]...)...)
	if got := specNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("command names:\n got %v\nwant %v", got, want)
	}
}

func TestParseScriptCollectsEveryError(t *testing.T) {
	src := "cluster nodes=3\r\nkil n1\n\n# comment\nproduce orders acks=2\nheal\n"
	lines, err := ParseScript(src)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("want two errors, got %v", err)
	}
	if errs[0].Line != 2 || errs[1].Line != 5 {
		t.Errorf("errors on lines %d and %d, want 2 and 5", errs[0].Line, errs[1].Line)
	}
	if len(lines) != 2 || lines[0].Num != 1 || lines[1].Num != 6 {
		t.Errorf("lines %+v; want the good lines 1 and 6", lines)
	}
}

// In a lesson, a name it keeps a value under, compared with a number or
// given + N, is that value; outside one, or for any other name, the word
// is a word and the comparison an error, as before.
func TestParseSavedValues(t *testing.T) {
	kept := func(name string) bool { return name == "before" }
	for _, src := range []string{"expect epoch(orders/0) > before", "expect epoch(orders/0) >= before + 1", "wait before < hwm(orders/0)"} {
		c, err := ParseLineSaved(1, src, kept)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		var cond Condition
		switch c := c.(type) {
		case Expect:
			cond = c.Cond
		case Wait:
			cond = c.Cond
		}
		if cond.Left.Value.Kind != ValSaved && cond.Right.Value.Kind != ValSaved {
			t.Errorf("%s: no saved value in %+v", src, cond)
		}
		if got := c.String(); !strings.Contains(got, "before") {
			t.Errorf("%s reads back as %q", src, got)
		}
	}
	for _, src := range []string{"expect epoch(orders/0) > after", "expect lsot == 0"} {
		if _, err := ParseLineSaved(1, src, kept); err == nil {
			t.Errorf("%s parsed", src)
		}
	}
	if _, err := ParseLine(1, "expect epoch(orders/0) > before"); err == nil {
		t.Error("outside a lesson, a word compared with a number parsed")
	}
}
