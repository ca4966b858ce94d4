package command

import (
	"errors"
	"strings"
	"testing"
)

// Malformed lines: each error names the column, says what was expected
// and, when a known word is close, suggests it.
func TestParseErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{"kil n1", `line 1, col 1: unknown command "kil"; did you mean "kill"?`},
		{"crash n2", `line 1, col 9: expected "torn" after the node: the crash that tears the last write; e.g. crash n2 torn`},
		{"log files orders on n2", `line 1, col 11: log files needs a partition, written TOPIC/N like orders/0, not "orders"`},
		{"log files orders/0 n2", `line 1, col 20: expected "on" and a node after the partition, not "n2"; e.g. log files orders/0 on n2`},
		{"log dump /etc/passwd", `line 1, col 10: name a file inside the lab's log folder, as log files shows it: n2/orders-0/00000000000000000000.log`},
		{"log dump n1/../../x.log", `line 1, col 10: name a file inside the lab's log folder, as log files shows it: n2/orders-0/00000000000000000000.log`},
		{"isol n1", `line 1, col 1: unknown command "isol"; did you mean "isolate"?`},
		{"frobnicate", `line 1, col 1: unknown command "frobnicate"; help lists the commands`},
		{"check wy", `line 1, col 7: check takes nothing, or why and a count's name, not "wy"; e.g. check why order_violations; did you mean "why"?`},
		{"check why order_violation", `line 1, col 11: "order_violation" is not one of the checker's counts; write one of confirmed, lost, unknown, duplicate_deliveries, duplicate_effects, order_violations, dead_lettered, expired, dropped, rejected, duplicate_writes, unchecked, moved, reordered, fetched, refetched; did you mean "order_violations"?`},
		{"check why lost now", `line 1, col 16: unexpected "now"; e.g. check why order_violations`},
		{"kill", `line 1, col 5: kill needs a node (n1, leader(orders/0) or follower(orders/0)); e.g. kill leader(orders/0)`},
		{"kill x1", `line 1, col 6: "x1" is not a node; write n1…n9, leader(orders/0), leader(receipts) or follower(orders/0)`},
		{"kill leader(orders/0", `line 1, col 12: missing ")" to close the "(" here`},
		{"kill n1)", `line 1, col 8: unexpected ")" with no "(" before it`},
		{"kill lead(orders/0)", `line 1, col 6: "lead(" is not a way to name a node; write n1…n9, leader(orders/0), leader(receipts) or follower(orders/0); did you mean "leader"?`},
		{"kill n1 n2", `line 1, col 9: unexpected "n2"; e.g. kill leader(orders/0)`},
		{"produce", `line 1, col 8: produce needs a topic; e.g. produce orders key=881 value="order 881 placed" acks=all`},
		{"produce orders ack=1", `line 1, col 16: produce has no option "ack"; its options are key, value, acks, idempotent, count, as, batch, partition, tombstone; did you mean "acks"?`},
		{"produce orders acks=2", `line 1, col 21: acks=2: want 0, 1 or all`},
		{"produce orders acks=al", `line 1, col 21: acks=al: want 0, 1 or all; did you mean "all"?`},
		{"produce orders count=0", `line 1, col 22: count=0: want a whole number from 1 to 100000`},
		{`produce orders value="unterminated`, `line 1, col 22: missing the closing " of the text that starts here`},
		{`produce orders value="bad \q"`, `line 1, col 22: quoted text "bad \q" has a bad escape; write \" for a quote and \\ for a backslash`},
		{"produce orders key=1 key=2", `line 1, col 22: key is given twice`},
		{"produce orders idempotent", `line 1, col 16: idempotent needs a value: write idempotent=…`},
		{"produce orders idempotent=yes", `line 1, col 27: idempotent=yes: want true or false`},
		{"produce orders acks=1 idempotent=true", `line 1, col 23: idempotent=true needs acks=all: with acks=1 a write the leader acknowledged can still vanish`},
		{"produce orders key=order-{x}", `line 1, col 20: key=order-{x}: unknown placeholder {x}; {n} (the message's number) is the only one`},
		{"produce bad/topic", `line 1, col 9: "bad/topic" is not a valid a topic: use 1–64 letters, digits, '.', '_' or '-'`},
		{"topic create orders", `line 1, col 20: topic create needs partitions=N; e.g. topic create orders partitions=3`},
		{"topic creat orders partitions=3", `line 1, col 7: expected "create" after "topic", not "creat"; did you mean "create"?`},
		{"topic", `line 1, col 6: expected "create" after "topic"`},
		{"topic create orders partitions=3 retention=10x", `line 1, col 44: retention=10x: want an age like 10m or a size like 1MB`},
		{"topic create a partitions=1 cleaner=manual", `line 1, col 29: cleaner= applies to a compacted topic; add cleanup=compact (or cleanup=compact,delete)`},
		{"topic create a partitions=1 cleanup=compact retention=1h", `line 1, col 45: with cleanup=compact nothing is deleted by age or size; write cleanup=compact,delete to have both`},
		{"produce a key=k value=x tombstone=true", `line 1, col 25: a tombstone has no value (it is null); leave out value= or tombstone=true`},
		{"compact accounts", `line 1, col 9: compact needs a partition, written TOPIC/N like accounts/0, not "accounts"`},
		{"consumer start c1 group=g topic=t service=orders", `line 1, col 43: service=orders: want payments or wallet`},
		{"consumer start c1 group=g topic=t service=walet", `line 1, col 43: service=walet: want payments or wallet; did you mean "wallet"?`},
		{"cluster nodes=12", `line 1, col 15: nodes=12: want a whole number from 1 to 9`},
		{"cluster nodes=3 timing=slow", `line 1, col 24: timing=slow: want fast or classroom`},
		{"cluster nodes=3 timing=clasroom", `line 1, col 24: timing=clasroom: want fast or classroom; did you mean "classroom"?`},
		{"partition n1 n2", `line 1, col 14: expected "|" between sides, not "n2"; list the nodes of one side with commas: n2,n3`},
		{"partition n1 |", `line 1, col 15: the side after the last "|" is empty; e.g. partition n1 | n2,n3`},
		{"partition n1", `line 1, col 13: partition needs at least two sides; e.g. partition n1 | n2,n3`},
		{"partition n1,n2 | n2", `line 1, col 19: n2 is on two sides`},
		{"slow n1 fast", `line 1, col 9: "fast" is not a latency; write a duration up to 60s like 200ms, or off`},
		{"slow n1 of", `line 1, col 9: "of" is not a latency; write a duration up to 60s like 200ms, or off; did you mean "off"?`},
		{"speed 10", `line 1, col 7: write the speed with an x, as in 10x; did you mean "10x"?`},
		{"speed fast", `line 1, col 7: "fast" is not a speed; write a factor from 0.01x to 1000x, like 10x or 0.5x`},
		{"wait epoch(orders/0) = 3", `line 1, col 22: expected a comparison (==, !=, <, <=, > or >=) after epoch(orders/0), not "="; did you mean "=="?`},
		{"wait epoch(orders/0) ! 3", `line 1, col 22: unexpected "!"; comparisons are ==, !=, <, <=, > and >=; did you mean "!="?`},
		{"wait epoch(orders/0)", `line 1, col 21: wait epoch(orders/0) needs a comparison after it (==, !=, <, <=, > or >=); write VALUE OP VALUE, e.g. epoch(orders/0) == 3 or lost == 0`},
		{"wait lsot == 0", `line 1, col 11: neither lsot nor 0 reads the lab; one side must be a lab value like hwm(orders/0) or a checker field like lost; did you mean "lost"?`},
		{"wait lost=0", `line 1, col 6: "lost=0" is an option, not a condition; write VALUE OP VALUE, e.g. epoch(orders/0) == 3 or lost == 0; did you mean "lost == 0"?`},
		{"wait epoch(orders/0) == 3 timeout=soon", `line 1, col 35: timeout=soon: want a duration above zero, like 200ms, 5s or 10m`},
		{"expect leader(orders/0) > n1", `line 1, col 25: leader(orders/0) is a word, not a number: compare it with == or !=`},
		{"expect leader(orders/0) == 2", `line 1, col 25: leader(orders/0) is a word and 2 a number; they cannot be compared`},
		{"expect epok(orders/0) == 2", `line 1, col 8: unknown lab value "epok("; the lab values are ` + strings.Join(funcNames(), ", ") + `; did you mean "epoch"?`},
		{"expect logstart(orders/0@n1) == 0", `line 1, col 17: logstart(…) reads the partition's leader; only epoch, hwm, leo, held_back, records, segments, segment, position take @NODE`},
		{"expect epoch(orders/0@n1, last) == 8", `line 1, col 14: epoch(orders/0@n1, "last"): after the comma comes an offset, a whole number from 0 up, as in epoch(orders/0@n1, 1500)`},
		{"expect epoch(receipts, 3) == 8", `line 1, col 14: epoch(receipts, 3): only a partition's records have offsets; name one, as in epoch(orders/0@n1, 1500)`},
		{"expect hwm(orders/0@n1, 3) == 8", `line 1, col 12: hwm(…) takes one partition or queue; only epoch, segment and position take an offset after a comma, as in epoch(orders/0@n1, 1500)`},
		{"expect position(orders/0@n2) == 8", `line 1, col 17: position(orders/0@n2) needs an offset after a comma: the batch holding which record? As in position(orders/0@n2, 1500)`},
		{"expect segments(receipts) == 2", `line 1, col 17: segments(receipts): only a partition's log has segments; name one, as in segments(orders/0@n1)`},
		{"expect segment(orders/0, -3) == 0", `line 1, col 16: segment(orders/0, "-3"): after the comma comes an offset, a whole number from 0 up, as in segment(orders/0@n1, 1500)`},
		{"expect leader(orders/0) + 1 == n2", `line 1, col 25: leader(orders/0) is not a number; only numbers take +`},
		{"expect epoch(orders/0) == epoch(orders/0@n1) +", `line 1, col 47: expected a number after "+", as in epoch(orders/0@n1) + 1`},
		{"expect rows(ordrs.outbox) > 0", `line 1, col 13: unknown service "ordrs"; the services are orders, payments, wallet or checkout; did you mean "orders"?`},
		{"expect rows(orders) > 0", `line 1, col 13: rows(…) needs SERVICE.TABLE, as in rows(orders.outbox) or rows(orders.outbox, status='pending')`},
		{"expect lost == 0 timeout=1s", `line 1, col 18: unexpected "timeout=1s"; e.g. expect lost == 0`},
		{"drop next reply from producer", `line 1, col 17: expected "to" after "drop next reply", not "from"; e.g. drop next reply to producer; did you mean "to"?`},
		{"drop next packet to producer", `line 1, col 11: expected "reply" or "ack" after "drop next", not "packet"`},
		{"drop next ack to w1", `line 1, col 15: expected "from" after "drop next ack", not "to"; e.g. drop next ack from w1; did you mean "from"?`},
		{"consumer begin c1 group=g topic=orders", `line 1, col 10: expected start, restart or stop, not "begin"`},
		{"consumer strat c1", `line 1, col 10: expected start, restart or stop, not "strat"; did you mean "start"?`},
		{"consumer start c1 topic=orders", `line 1, col 31: consumer start needs group=GROUP; e.g. consumer start billing-1 group=billing topic=orders ack=after`},
		{"consumer stop c1 group=g", `line 1, col 18: consumer stop takes no options; got group=`},
		{"consumer start c1 group=g topic=t jitter=full", `line 1, col 35: jitter= shapes the backoff between retries; it needs retry=backoff`},
		{"worker start w1 queue=receipts fail=poison", `line 1, col 37: fail=poison: poison needs the text that marks a poison payload, like poison:BAD`},
		{"worker start w1 queue=receipts fail=transient:2", `line 1, col 37: fail=transient:2: transient:P needs a probability above 0 and at most 1, like transient:0.2`},
		{"load orders rate=1000 for=60s", `line 1, col 18: rate=1000: want a rate like 400/s or 30/m, above zero and at most 1000000/s`},
		{"load orders rate=10/s", `line 1, col 22: load needs for=DURATION; e.g. load orders rate=1000/s for=60s key=order-{n}`},
		{"seek g1 orders/x to=earliest", `line 1, col 9: "orders/x" is not a partition; write TOPIC/N, e.g. orders/0`},
		{"seek g1 orders/0 to=first", `line 1, col 21: to=first: want an offset, earliest, latest, a time like 2024-05-01T10:00:00Z or a time ago like -5m`},
		{"sql orders SELECT", `line 1, col 12: put the query in double quotes: sql orders "SELECT …"`},
		{`sql orders "DELETE FROM outbox"`, `line 1, col 12: sql runs read-only queries: start it with SELECT or WITH`},
		{`sql order "SELECT 1"`, `line 1, col 5: expected orders, payments, wallet or checkout, not "order"; did you mean "orders"?`},
		{"help kil", `line 1, col 6: no command "kil"; help lists them; did you mean "kill"?`},
		{"elect n1", `line 1, col 9: elect needs a partition (orders/0) or queue after the node; e.g. elect n2 orders/0`},
		{"elect n1 orders/-1", `line 1, col 10: "orders/-1": the partition after '/' must be a number ≥ 0, as in orders/0`},
		{"elect n1 receipts epoch=7", `line 1, col 19: epoch= moves a partition's leadership round to an epoch; name a partition, like orders/0`},
		{"heal now", `line 1, col 6: heal takes nothing after it; got "now"`},
		{"service start wallet strategy=dedupe", `line 1, col 31: strategy=dedupe: wallet takes none, dedupe-table, dedupe-elsewhere, conditional or absolute; did you mean "dedupe-table"?`},
		{"service start payments mode=sync", `line 1, col 24: mode= is not an option of payments`},
		{"service begin orders", `line 1, col 9: expected start, restart or stop, not "begin"`},
		{"service restart orders mode=outbox", `line 1, col 24: service restart takes only crash=; mode= was set when orders started (stop it and start it again to change it)`},
		{"service stop orders writes=5/s", `line 1, col 21: service stop takes no options; got writes=`},
		{"service stop orders crash=after-commit", `line 1, col 21: service stop takes no options; got crash=`},
		{"order", `line 1, col 6: order needs an order id; e.g. order 881 amount=450`},
		{"order 08", `line 1, col 7: "08" is not an order id; write a whole number from 1 to 1000000000000, like 881`},
		{"order 881 amout=450", `line 1, col 11: order has no option "amout"; its options are user, amount, item, count; did you mean "amount"?`},
		{"order 881 amount=0", `line 1, col 18: amount=0: want a whole number from 1 to 100000000`},
		{`order 881 item=""`, `line 1, col 16: item=: want the item's name, 1 to 64 characters, like phone`},
		{"buyers stop now", `line 1, col 13: buyers stop takes nothing after it; got "now"`},
		{"buyers rate=10/s", `line 1, col 17: buyers needs for=DURATION; e.g. buyers rate=10/s for=5s`},
		{"buyers 881 rate=10/s for=5s", `line 1, col 8: unexpected "881"; options are written key=value: e.g. buyers rate=10/s for=5s`},
		{"buyers rate=10/s for=0s", `line 1, col 22: for=0s: want a duration above zero, like 200ms, 5s or 10m`},
		{"buyers rate=1/m for=10s", `line 1, col 17: rate=1/m for=10s makes no buyer; raise the rate or the time`},
		{"buyers rate=1000/s for=1m", `line 1, col 8: rate=1000/s for=1m makes 60000 buyers; at most 20000 fit in one command`},
		{"buyers rate=10/s for=5s thraeds=8", `line 1, col 25: buyers has no option "thraeds"; its options are rate, for, amount`},
		{"service start checkout receipt=slow", `line 1, col 32: receipt=slow: want a duration above zero, like 200ms, 5s or 10m`},
		{"service start orders receipt=3s", `line 1, col 22: receipt= is not an option of orders`},
		{"service restart checkout receipt=3s", `line 1, col 26: service restart takes only crash=; receipt= was set when checkout started (stop it and start it again to change it)`},
		{"expect p99(orders) < 1", `line 1, col 12: p99(orders): only the checkout service measures this; write p99(checkout)`},
		{"queue create receipts dlq=receipts", `line 1, col 23: a queue cannot be its own dead-letter queue; name another, e.g. dlq=receipts-dlq`},
		{"queue create receipts overflow=drop-head", `line 1, col 23: overflow= says what a full queue does; give it a max-length=N to fill`},
		{"queue create receipts max-length=5 overflow=drop", `line 1, col 45: overflow=drop: want reject or drop-head; did you mean "drop-head"?`},
		{`"kill" n1`, `line 1, col 1: expected a command, not "kill"; help lists them`},
		{"kill n1 \x07", `line 1, col 9: unexpected character '\a'`},
		{"kill \xff", `line 1, col 1: the line is not valid UTF-8 text`},
		{"| n1", `line 1, col 1: expected a command, not "|"; help lists them`},
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		_, err := Parse(tc.line)
		if err == nil {
			t.Errorf("%q parsed; want %s", tc.line, tc.want)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %T is not a *command.Error", tc.line, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.line, err, tc.want)
		}
	}
}

func TestErrorLineNumbers(t *testing.T) {
	_, err := ParseLine(42, "kil n1")
	if err == nil || err.Error() != `line 42, col 1: unknown command "kil"; did you mean "kill"?` {
		t.Errorf("got %v", err)
	}
}
