package groupcoord

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int
}

func (tp TopicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(tp.Partition) }

func parseTopicPartition(s string) (TopicPartition, error) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("%q is not TOPIC/N", s)
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 0 {
		return TopicPartition{}, fmt.Errorf("%q is not TOPIC/N", s)
	}
	return TopicPartition{Topic: s[:i], Partition: p}, nil
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

func sortTPs(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool { return lessTP(tps[i], tps[j]) })
}

// Strategy is how a group's partitions are spread over its members.
type Strategy string

const (
	// Range gives each member a contiguous range of each topic's
	// partitions, the first members one more when they do not divide
	// evenly (Kafka's RangeAssignor).
	Range Strategy = "range"
	// RoundRobin deals every subscribed partition, in topic and partition
	// order, to the members in turn (Kafka's RoundRobinAssignor).
	RoundRobin Strategy = "round-robin"
)

// ParseStrategy reads "range" (also the empty string) or "round-robin".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "", "range":
		return Range, nil
	case "round-robin", "roundrobin":
		return RoundRobin, nil
	}
	return "", fmt.Errorf("%w: strategy %q; want range or round-robin", ErrInvalid, s)
}

// AssignMember is one member as the assignors see it. Members are ordered
// by Seq (the order they first joined in), then by ID.
type AssignMember struct {
	ID     string
	Seq    int
	Topics []string
}

// Assign spreads the partitions of the members' topics over the members.
// partitions gives a topic's partition count (0 for a topic that does not
// exist, which is skipped). Every member has an entry, possibly empty
// (idle); each partition goes to exactly one member that subscribes to its
// topic.
func Assign(strategy Strategy, members []AssignMember, partitions func(topic string) int) map[string][]TopicPartition {
	ms := slices.Clone(members)
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Seq != ms[j].Seq {
			return ms[i].Seq < ms[j].Seq
		}
		return ms[i].ID < ms[j].ID
	})
	out := make(map[string][]TopicPartition, len(ms))
	subscribers := map[string][]string{} // topic → member ids in order
	for _, m := range ms {
		out[m.ID] = nil
		seen := map[string]bool{}
		for _, t := range m.Topics {
			if !seen[t] {
				seen[t] = true
				subscribers[t] = append(subscribers[t], m.ID)
			}
		}
	}
	topics := make([]string, 0, len(subscribers))
	for t := range subscribers {
		if partitions(t) > 0 {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	switch strategy {
	case RoundRobin:
		var all []TopicPartition
		for _, t := range topics {
			for p := range partitions(t) {
				all = append(all, TopicPartition{t, p})
			}
		}
		subscribed := map[string]map[string]bool{}
		for t, ids := range subscribers {
			subscribed[t] = map[string]bool{}
			for _, id := range ids {
				subscribed[t][id] = true
			}
		}
		next := 0
		for _, tp := range all {
			for k := 0; k < len(ms); k++ {
				m := ms[(next+k)%len(ms)]
				if subscribed[tp.Topic][m.ID] {
					out[m.ID] = append(out[m.ID], tp)
					next = (next + k + 1) % len(ms)
					break
				}
			}
		}
	default: // Range
		for _, t := range topics {
			n, ids := partitions(t), subscribers[t]
			per, extra := n/len(ids), n%len(ids)
			for i, id := range ids {
				start := per*i + min(i, extra)
				length := per
				if i < extra {
					length++
				}
				for p := start; p < start+length; p++ {
					out[id] = append(out[id], TopicPartition{t, p})
				}
			}
		}
	}
	for id := range out {
		sortTPs(out[id])
	}
	return out
}

// PartitionFor picks the partition of __consumer_offsets whose leader
// coordinates group, as Kafka does: abs(group.hashCode()) % partitions,
// with Java's String.hashCode over UTF-16 code units and Kafka's
// Utils.abs, which maps MinInt32 to 0.
func PartitionFor(group string, partitions int) int {
	if partitions < 1 {
		return 0
	}
	h := JavaHashCode(group)
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return int(h) % partitions
}

// JavaHashCode is Java's String.hashCode: s[0]*31^(n-1) + … + s[n-1] over
// the string's UTF-16 code units, in wrapping int32 arithmetic.
func JavaHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ValidateGroupName accepts what a topic name accepts: 1–64 letters,
// digits, '.', '_' or '-'. (Record keys are space-separated.)
func ValidateGroupName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: group name %q: use 1–64 letters, digits, '.', '_' or '-'", ErrInvalid, name)
	}
	return nil
}
