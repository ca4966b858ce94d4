package command

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse: parsing never panics; an error is a *Error at a real column;
// a command prints to text that parses back to an equal command.
func FuzzParse(f *testing.F) {
	for _, s := range Specs() {
		f.Add(s.Example)
	}
	for _, s := range []string{
		`produce orders key="a b" value="order 881 placed ₹450" acks=1`,
		"wait epoch(orders/0) == epoch(orders/0@n1) + 1 timeout=3s",
		"expect rows(orders.outbox, status='pending' AND id > 3) >= 2",
		"partition leader(orders/0) | follower(orders/0),n3",
		`expect state("x y") == "up"`,
		"seek g orders/3 to=2024-05-01T10:00:00.5+05:30",
		"kill n1 # comment", "wait lost>=1", `worker start w fail="poison:a \"b\""`,
		"consumer start c group=g topic=t retry=backoff base=1s cap=5s jitter=equal",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := ParseLine(1, line)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line != 1 || pe.Col < 1 || pe.Msg == "" {
				t.Fatalf("%q: bad error %#v", line, err)
			}
			return
		}
		if c == nil {
			return
		}
		text := c.String()
		again, err := Parse(text)
		if err != nil {
			t.Fatalf("%q parsed as %#v, printed as %q, which does not parse: %v", line, c, text, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("%q parsed as %#v, printed as %q, which parses as %#v", line, c, text, again)
		}
		if again.String() != text {
			t.Fatalf("%q prints as %q, then as %q", line, text, again.String())
		}
	})
}

// FuzzCondition: any condition text either parses to a condition that
// prints back to itself, or fails with a positioned error; and comparing
// two evaluated sides obeys the laws of the operators, whatever the values.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		"lost == 0", "epoch(orders/0) == epoch(orders/0@n1) + 1",
		"leader(orders/0) != n1", "rows(orders.outbox, status='pending') >= 2",
		"lag(billing) <= 6000 - 600", "state(worker-a) == crashed",
		"depth(receipts) > 0", `state("x y") == "up"`, "hwm(orders/0) = 3",
		"duplicate_effects", "leader(receipts) == none", "1 < 2",
		"lag(billing, orders/1) >= 3", "workers(order-events) == 2",
	} {
		f.Add(s, 3.0, -1.5, "up", "down")
	}
	f.Fuzz(func(t *testing.T, cond string, x, y float64, a, b string) {
		c, err := ParseLine(1, "expect "+cond)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Col < 1 || pe.Msg == "" {
				t.Fatalf("%q: bad error %#v", cond, err)
			}
		} else if e, ok := c.(Expect); ok {
			again, err := ParseLine(1, e.String())
			if err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("%q parsed as %#v, printed as %q, which parses as %#v (%v)", cond, c, e.String(), again, err)
			}
		}

		holds := map[string]bool{}
		for _, op := range ops {
			holds[op] = Holds(op, x, y)
		}
		if x == x && y == y { // neither is NaN: exactly one of <, ==, >
			n := 0
			for _, op := range []string{"<", "==", ">"} {
				if holds[op] {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%v and %v: %v", x, y, holds)
			}
		}
		if holds["!="] == holds["=="] || holds["<="] != (holds["<"] || holds["=="]) || holds[">="] != (holds[">"] || holds["=="]) {
			t.Fatalf("%v and %v: %v", x, y, holds)
		}
		if Holds("==", a, b) != (a == b) || Holds("!=", a, b) == Holds("==", a, b) || Holds("<", a, b) || Holds(">=", a, b) {
			t.Fatalf("words %q and %q: == %v, != %v", a, b, Holds("==", a, b), Holds("!=", a, b))
		}
	})
}
