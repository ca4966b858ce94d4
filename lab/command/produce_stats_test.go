package command

import (
	"testing"
)

// requests(C), produce_rate(C) and speedup(A, B) read a client's last
// produce command; each prints back in a form that parses to the same.
func TestParseProduceStats(t *testing.T) {
	num := func(f float64) Expr { return Expr{Value: Value{Kind: ValNumber, Num: f}} }
	cases := []parseCase{
		{"expect requests(one) == 5000", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "requests", Arg: "one"}}, Op: "==", Right: num(5000)}}},
		{"expect produce_rate(hundred) > 0", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "produce_rate", Arg: "hundred"}}, Op: ">", Right: num(0)}}},
		{"expect speedup(hundred, one) >= 3", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "speedup", Arg: "hundred", Other: "one"}}, Op: ">=", Right: num(3)}}},
		{"expect speedup( hundred ,one ) >= 3", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "speedup", Arg: "hundred", Other: "one"}}, Op: ">=", Right: num(3)}}},
	}
	parsesTo(t, cases)
}

func TestParseProduceStatsErrors(t *testing.T) {
	cases := []errCase{
		{"expect speedup(hundred) >= 3", "speedup(…) needs two clients, CLIENT, CLIENT, as in speedup(hundred, one)"},
		{"expect speedup(hundred, ) >= 3", "speedup(…) needs two clients"},
		{"expect speedup(a b, one) >= 3", "speedup(…) needs two clients"},
		{"expect speedup(one, one) >= 3", "compares a client with itself and is always 1"},
		{"expect requests() == 1", "requests(…) needs CLIENT"},
		{"expect produce_rate(a/b) > 1", "produce_rate(…) needs CLIENT"},
		{"expect request(one) == 1", `unknown lab value "request("`},
		{"expect produce_rate(one) == fast", "compare"},
	}
	refused(t, cases)
}
