package groupcoord

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func counts(m map[string]int) func(string) int { return func(t string) int { return m[t] } }

func tps(s ...string) []TopicPartition {
	var out []TopicPartition
	for _, x := range s {
		tp, err := parseTopicPartition(x)
		if err != nil {
			panic(err)
		}
		out = append(out, tp)
	}
	return out
}

func TestRangeAssign(t *testing.T) {
	members := []AssignMember{{ID: "c2-b", Seq: 2, Topics: []string{"orders"}}, {ID: "c1-a", Seq: 1, Topics: []string{"orders", "clicks"}}, {ID: "c3-c", Seq: 3, Topics: []string{"orders"}}}
	got := Assign(Range, members, counts(map[string]int{"orders": 8, "clicks": 2}))
	want := map[string][]TopicPartition{
		// 8 partitions over 3 members: 3, 3, 2; the first members get the extra ones.
		"c1-a": tps("clicks/0", "clicks/1", "orders/0", "orders/1", "orders/2"),
		"c2-b": tps("orders/3", "orders/4", "orders/5"),
		"c3-c": tps("orders/6", "orders/7"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("range: got %v, want %v", got, want)
	}
}

func TestRoundRobinAssign(t *testing.T) {
	members := []AssignMember{{ID: "a", Seq: 1, Topics: []string{"orders", "clicks"}}, {ID: "b", Seq: 2, Topics: []string{"orders"}}}
	got := Assign(RoundRobin, members, counts(map[string]int{"orders": 3, "clicks": 2}))
	// clicks/0 a, clicks/1 a (b does not read clicks), orders/0 b, orders/1 a, orders/2 b
	want := map[string][]TopicPartition{
		"a": tps("clicks/0", "clicks/1", "orders/1"),
		"b": tps("orders/0", "orders/2"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round-robin: got %v, want %v", got, want)
	}
}

// More members than partitions: each partition has exactly one owner and
// the rest are idle, with either strategy.
func TestExtraMembersIdle(t *testing.T) {
	for _, s := range []Strategy{Range, RoundRobin} {
		var members []AssignMember
		for i := range 10 {
			members = append(members, AssignMember{ID: fmt.Sprintf("c%02d", i), Seq: i, Topics: []string{"orders"}})
		}
		got := Assign(s, members, counts(map[string]int{"orders": 8}))
		owners := map[TopicPartition]int{}
		idle := 0
		for _, a := range got {
			if len(a) == 0 {
				idle++
			}
			if len(a) > 1 {
				t.Errorf("%s: a member got %d partitions with 10 members on 8", s, len(a))
			}
			for _, tp := range a {
				owners[tp]++
			}
		}
		if idle != 2 || len(got) != 10 {
			t.Errorf("%s: %d idle of %d; want 2 of 10", s, idle, len(got))
		}
		for p := range 8 {
			if owners[TopicPartition{"orders", p}] != 1 {
				t.Errorf("%s: orders/%d has %d owners", s, p, owners[TopicPartition{"orders", p}])
			}
		}
		// Idle are the last to join.
		if len(got["c08"]) != 0 || len(got["c09"]) != 0 {
			t.Errorf("%s: the idle members should be the last two to join: %v", s, got)
		}
	}
}

func TestPartitionForMatchesJava(t *testing.T) {
	cases := []struct {
		s    string
		hash int32
	}{
		{"", 0},
		{"hello", 99162322},
		{"billing", -109829509},
		// The famous string whose hashCode is Integer.MIN_VALUE: Kafka's
		// Utils.abs maps it to 0 where Math.abs would stay negative.
		{"polygenelubricants", -2147483648},
		{"€uro", 249288006},
		{"😀x", 54959989}, // a surrogate pair counts as two code units,
	}
	for _, c := range cases {
		if h := JavaHashCode(c.s); h != c.hash {
			t.Errorf("hashCode(%q) = %d, want %d", c.s, h, c.hash)
		}
	}
	if p := PartitionFor("polygenelubricants", 50); p != 0 {
		t.Errorf("PartitionFor(MinInt hash) = %d, want 0", p)
	}
	if p := PartitionFor("billing", 50); p != 109829509%50 {
		t.Errorf("PartitionFor(billing, 50) = %d, want %d", p, 109829509%50)
	}
	if p := PartitionFor("billing", 1); p != 0 {
		t.Errorf("one partition: %d", p)
	}
}

func TestParseStrategy(t *testing.T) {
	if s, err := ParseStrategy(""); err != nil || s != Range {
		t.Errorf("default strategy: %v %v", s, err)
	}
	if _, err := ParseStrategy("sticky"); !errors.Is(err, ErrInvalid) {
		t.Errorf("sticky: %v", err)
	}
}
