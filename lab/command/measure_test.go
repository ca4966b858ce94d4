package command

import (
	"testing"
	"time"
)

// The pieces lessons measure rates with: a tolerance on a comparison, a
// pause a stretch of lab time ahead, a consumer that commits per poll, and
// the lab values elapsed, idle and partition_of. Each prints back in a
// form that parses to the same command.
func TestParseMeasuring(t *testing.T) {
	lag := Expr{Value: Value{Kind: ValLab, Func: "lag", Arg: "billing"}}
	cases := []parseCase{
		{"expect lag(billing) == 6000 ± 600", Expect{Cond: Condition{Left: lag, Op: "==", Right: Expr{Value: Value{Kind: ValNumber, Num: 6000}}, Tol: 600}}},
		{"expect lag(billing) != 0 +- 0.5", Expect{Cond: Condition{Left: lag, Op: "!=", Right: Expr{Value: Value{Kind: ValNumber, Num: 0}}, Tol: 0.5}}},
		{"wait lag(billing) == 6000 ± 600 timeout=5s", Wait{Cond: Condition{Left: lag, Op: "==", Right: Expr{Value: Value{Kind: ValNumber, Num: 6000}}, Tol: 600}, Timeout: 5 * time.Second}},
		{"pause", Pause{}},
		{"pause in=10s", Pause{In: 10 * time.Second}},
		{"consumer start b1 group=billing topic=orders commit=poll rate=50/s", Consumer{Action: "start", Client: "b1", Group: "billing", Topic: "orders", Commit: "poll", Options: ClientOptions{Rate: 50}}},
		{"wait elapsed(rush) >= 10", Wait{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "elapsed", Arg: "rush"}}, Op: ">=", Right: Expr{Value: Value{Kind: ValNumber, Num: 10}}}, Timeout: DefaultWaitTimeout}},
		{"expect idle(billing) == 2", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "idle", Arg: "billing"}}, Op: "==", Right: Expr{Value: Value{Kind: ValNumber, Num: 2}}}}},
		{"expect partition_of(orders, order-881) != partition_of(orders6, order-881)", Expect{Cond: Condition{
			Left: Expr{Value: Value{Kind: ValLab, Func: "partition_of", Arg: "orders", Key: "order-881"}}, Op: "!=",
			Right: Expr{Value: Value{Kind: ValLab, Func: "partition_of", Arg: "orders6", Key: "order-881"}}}}},
	}
	parsesTo(t, cases)
}

func TestParseMeasuringErrors(t *testing.T) {
	cases := []errCase{
		{"expect lag(billing) < 6000 ± 600", "± N only follows == or !=, as in lag(billing) == 6000 ± 600"},
		{"expect lag(billing) == 6000 ± x", `expected a number above zero after "±"`},
		{"expect lag(billing) == 6000 ± 0", `expected a number above zero after "±"`},
		{"expect lag(billing) == 6000 ±", `expected a number above zero after "±"`},
		{"expect state(n1) == up ± 1", "state(n1) is a word: only numbers take ± N"},
		{"pause in=0s", "want a duration above zero"},
		{"consumer start b1 group=billing topic=orders commit=batch", "commit"},
		{"expect partition_of(orders) == 1", "partition_of(…) needs TOPIC, KEY, as in partition_of(orders, 881)"},
		{"expect partition_of(orders, ) == 1", "partition_of(…) needs TOPIC, KEY"},
	}
	refused(t, cases)
}
