package loads

import (
	"fmt"
	"strings"
	"time"

	"github.com/mqlab/mqlab/lab/command"
	"github.com/mqlab/mqlab/lab/family"
)

// Elapsed reads elapsed(LOAD): the lab seconds since the newest load
// of that client or topic began sending. It keeps counting after the load
// ends, so a lesson can time what follows a burst from the burst's start;
// pause stops it with the rest of lab time.
func (s *Set) Elapsed(v command.Value, now time.Time) (any, error) {
	s.mu.Lock()
	loads := append([]*load(nil), s.loads...)
	s.mu.Unlock()
	var names []string
	for i := len(loads) - 1; i >= 0; i-- {
		ld := loads[i]
		if ld.client != v.Arg && ld.cmd.Topic != v.Arg {
			names = append(names, ld.client, ld.cmd.Topic)
			continue
		}
		ld.mu.Lock()
		started := ld.started
		ld.mu.Unlock()
		if started.IsZero() {
			return nil, family.NotNow(fmt.Errorf("%s: the load has not begun sending yet", v))
		}
		return max(0, now.Sub(started).Seconds()), nil
	}
	if len(names) == 0 {
		return nil, family.NotNow(fmt.Errorf("%s: no load has run yet; load TOPIC rate=N/s for=D starts one", v))
	}
	return nil, fmt.Errorf("%s: no load on a topic or as a client by that name; the loads are %s%s", v, strings.Join(dedupe(names), ", "), command.DidYouMean(v.Arg, names))
}

func dedupe(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
