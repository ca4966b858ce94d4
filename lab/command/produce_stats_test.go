package command

import (
	"reflect"
	"strings"
	"testing"
)

// requests(C), produce_rate(C) and speedup(A, B) read a client's last
// produce command; each prints back in a form that parses to the same.
func TestParseProduceStats(t *testing.T) {
	num := func(f float64) Expr { return Expr{Value: Value{Kind: ValNumber, Num: f}} }
	cases := []struct {
		line string
		want Command
	}{
		{"expect requests(one) == 5000", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "requests", Arg: "one"}}, Op: "==", Right: num(5000)}}},
		{"expect produce_rate(hundred) > 0", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "produce_rate", Arg: "hundred"}}, Op: ">", Right: num(0)}}},
		{"expect speedup(hundred, one) >= 3", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "speedup", Arg: "hundred", Other: "one"}}, Op: ">=", Right: num(3)}}},
		{"expect speedup( hundred ,one ) >= 3", Expect{Cond: Condition{Left: Expr{Value: Value{Kind: ValLab, Func: "speedup", Arg: "hundred", Other: "one"}}, Op: ">=", Right: num(3)}}},
	}
	for _, c := range cases {
		got, err := Parse(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.line, got, c.want)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%q printed as %q, which parses to %#v (%v)", c.line, got.String(), again, err)
		}
	}
}

func TestParseProduceStatsErrors(t *testing.T) {
	cases := []struct{ line, want string }{
		{"expect speedup(hundred) >= 3", "speedup(…) needs two clients, CLIENT, CLIENT, as in speedup(hundred, one)"},
		{"expect speedup(hundred, ) >= 3", "speedup(…) needs two clients"},
		{"expect speedup(a b, one) >= 3", "speedup(…) needs two clients"},
		{"expect speedup(one, one) >= 3", "compares a client with itself and is always 1"},
		{"expect requests() == 1", "requests(…) needs CLIENT"},
		{"expect produce_rate(a/b) > 1", "produce_rate(…) needs CLIENT"},
		{"expect request(one) == 1", `unknown lab value "request("`},
		{"expect produce_rate(one) == fast", "compare"},
	}
	for _, c := range cases {
		_, err := Parse(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.line, err, c.want)
		}
	}
}
