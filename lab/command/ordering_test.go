package command

import (
	"testing"
	"time"
)

// The options and values the ordering lesson needs parse, print back to
// the same command, and refuse what cannot mean anything.
func TestOrderingOptionsAndValues(t *testing.T) {
	valid := []parseCase{
		{`send order-events key=881 value="order 881 placed"`, Send{Queue: "order-events", Key: "881", Keyed: true, Value: "order 881 placed", HasValue: true, Count: 1}},
		{"send order-events key=88{n} count=6", Send{Queue: "order-events", Key: "88{n}", Keyed: true, Count: 6}},
		{"worker start w1 queue=order-events work=1s", Worker{Action: "start", Client: "w1", Queue: "order-events", Options: ClientOptions{Work: time.Second}}},
		{"consumer start c1 group=billing topic=orders retry-topic=orders-retry max-attempts=3 work=50ms",
			Consumer{Action: "start", Client: "c1", Group: "billing", Topic: "orders", RetryTopic: "orders-retry",
				Options: ClientOptions{MaxAttempts: 3, Work: 50 * time.Millisecond}}},
		{"consumer restart c1 retry-topic=orders-retry", Consumer{Action: "restart", Client: "c1", RetryTopic: "orders-retry"}},
		{"wait lag(billing, orders/1) >= 3", Wait{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "lag", Arg: "billing",
			Target: Target{Name: "orders", Partition: 1, IsPartition: true}}}, Op: ">=", Right: Expr{Value: Value{Kind: ValNumber, Num: 3}}}, Timeout: 10 * time.Second}},
		{"expect lag(billing,orders/0) == 0", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "lag", Arg: "billing",
			Target: Target{Name: "orders", IsPartition: true}}}, Op: "==", Right: Expr{Value: Value{Kind: ValNumber}}}}},
		{"expect workers(billing) == 1", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "workers", Arg: "billing"}}, Op: "==",
			Right: Expr{Value: Value{Kind: ValNumber, Num: 1}}}}},
		{"expect moved == 1", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValField, Word: "moved"}}, Op: "==", Right: Expr{Value: Value{Kind: ValNumber, Num: 1}}}}},
		{"expect reordered > 0", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValField, Word: "reordered"}}, Op: ">", Right: Expr{Value: Value{Kind: ValNumber}}}}},
	}
	parsesTo(t, valid)

	bad := []errCase{
		{"worker start w1 queue=q work=0s", "work=0s: want a duration above zero"},
		{"worker start w1 queue=q work=slow", "work=slow: want a duration above zero"},
		{"worker start w1 queue=q retry-topic=q-retry", `worker has no option "retry-topic"`},
		{"consumer start c1 group=g topic=orders retry-topic=orders", "retry-topic=orders is the topic the consumer reads; a record it gives up on must go to another topic, e.g. retry-topic=orders-retry"},
		{"consumer start c1 group=g topic=orders retry-topic=bad/name", "retry-topic=bad/name: want a name"},
		{"send q key=order-{x}", "key=order-{x}: unknown placeholder {x}"},
		{"wait lag(billing, orders) == 0", `lag(billing, …): "orders" is a topic; name one of its partitions, as in orders/0`},
		{"wait lag(billing, orders/x) == 0", `lag(billing, …): "orders/x": the partition after '/' must be a number ≥ 0, as in orders/0`},
		{"wait lag(, orders/0) == 0", "lag(…) needs a group first, as in lag(billing, orders/1)"},
		{"wait depth(q, orders/0) == 0", "depth(…) needs QUEUE: a name of letters, digits"},
		{"wait workers(billing, orders/0) == 0", "workers(…) needs GROUP: a name of letters, digits"},
	}
	refused(t, bad)
}
