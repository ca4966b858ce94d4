package lessons

import (
	"sort"
	"strings"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/lab/command"
)

// loadTarget checks the topic or queue a load sends to against what the
// lesson has created by then.
func (v *refs) loadTarget(line int, name string) {
	if _, ok := v.topics[name]; ok || v.queues[name] {
		return
	}
	var names []string
	for n := range v.topics {
		if !lab.InternalName(n) {
			names = append(names, n)
		}
	}
	for n := range v.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		v.p.problem(line, 0, "no topic or queue %s yet: create it first with topic create %s partitions=1 or queue create %s", name, name, name)
		return
	}
	v.p.problem(line, 0, "no topic or queue %s here; the lesson has created %s%s", name, strings.Join(names, ", "), command.DidYouMean(name, names))
}
