// Package series samples, at a fixed step of lab time, what a chart of
// backlog over time needs: every consumer group's lag(G) and every
// queue's depth(Q). The samples live in the lab's snapshot, so a
// recording carries them and a replay draws the same chart the live
// screen drew.
package series

import (
	"sort"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
	"github.com/mqlab/mqlab/lab/clock"
	"github.com/mqlab/mqlab/lab/family"
)

// Every is the lab time between two samples.
const Every = 250 * time.Millisecond

// Len bounds every series: the newest two minutes of lab time, room for
// a flash sale's rise and its drain.
const Len = 480

// minWall is the least wall time between two reads of the cluster:
// at 10x a step of lab time is 25 ms of wall time, and reading the
// cluster that often would cost more than the chart is worth. The steps
// that pass between two reads take the value of the read that follows
// them.
const minWall = 40 * time.Millisecond

// State is one lab value sampled every Every of lab time.
type State struct {
	Name   string        `json:"name"`  // the lab value: "lag(billing)", "depth(receipts)"
	Func   string        `json:"func"`  // "lag" or "depth"
	Of     string        `json:"of"`    // the group or queue
	Unit   string        `json:"unit"`  // "msgs"
	Start  time.Time     `json:"start"` // lab time of Values[0]
	Every  time.Duration `json:"every"`
	Values []int64       `json:"values"` // oldest first, at most Len
}

// End is the lab time of the step after the last value.
func (s State) End() time.Time { return s.Start.Add(time.Duration(len(s.Values)) * s.Every) }

// Set holds a world's series.
type Set struct {
	mu     sync.Mutex
	byName map[string]*State
	order  []string
	done   chan struct{} // closed when the sampler has stopped
}

func newSet() *Set {
	return &Set{byName: map[string]*State{}, done: make(chan struct{})}
}

// sample is one read of the values, by series name.
type sample struct {
	name, fn, of string
	value        int64
}

// samplesOf reads lag(G) for every group and depth(Q) for every queue.
func samplesOf(snap broker.Snapshot) []sample {
	var out []sample
	for _, g := range snap.Groups {
		out = append(out, sample{name: "lag(" + g.Group + ")", fn: "lag", of: g.Group, value: g.Lag})
	}
	for _, q := range snap.Queues {
		out = append(out, sample{name: "depth(" + q.Config.Name + ")", fn: "depth", of: q.Config.Name, value: int64(q.Counts.Depth())})
	}
	return out
}

// record puts one read into every step from `from` up to and including
// `to` (lab times on the grid of Every). A series seen for the first
// time starts at `from`; one not in the read (it cannot be read now) keeps
// its last value, so that every series stays on the same grid.
func (s *Set) record(samples []sample, from, to time.Time) {
	if to.Before(from) {
		return
	}
	steps := int(to.Sub(from)/Every) + 1
	if steps > Len {
		from = from.Add(time.Duration(steps-Len) * Every)
		steps = Len
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, smp := range samples {
		seen[smp.name] = true
		ss := s.byName[smp.name]
		if ss == nil {
			ss = &State{Name: smp.name, Func: smp.fn, Of: smp.of, Unit: "msgs", Start: from, Every: Every}
			s.byName[smp.name] = ss
			s.order = append(s.order, smp.name)
		}
		ss.add(smp.value, to)
	}
	for _, name := range s.order {
		if ss := s.byName[name]; !seen[name] && len(ss.Values) > 0 {
			ss.add(ss.Values[len(ss.Values)-1], to)
		}
	}
}

// add appends v for every step up to and including `to`, then drops the
// oldest values beyond Len.
func (ss *State) add(v int64, to time.Time) {
	for !ss.End().After(to) {
		ss.Values = append(ss.Values, v)
	}
	if n := len(ss.Values) - Len; n > 0 {
		ss.Values = append(ss.Values[:0], ss.Values[n:]...)
		ss.Start = ss.Start.Add(time.Duration(n) * ss.Every)
	}
}

// States copies the series: groups first, then queues, each by name.
func (s *Set) States() []State {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]State, 0, len(s.order))
	for _, name := range s.order {
		ss := *s.byName[name]
		ss.Values = append([]int64(nil), ss.Values...)
		out = append(out, ss)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Func != out[j].Func {
			return out[i].Func == "lag"
		}
		return out[i].Of < out[j].Of
	})
	return out
}

// Start starts sampling the world's cluster on every step of lab time
// until the world is retired; a paused clock takes no samples. Wait
// waits for the sampler to stop.
func Start(w family.World) *Set {
	s := newSet()
	go s.run(w)
	return s
}

func (s *Set) run(w family.World) {
	defer close(s.done)
	labClock, ctx := w.Clock(), w.Context()
	next := labClock.Now().Truncate(Every)
	for {
		if labClock.SleepUntil(ctx, next) != nil {
			return
		}
		now := labClock.Now()
		last := now.Truncate(Every)
		s.record(samplesOf(w.Cluster().SnapshotWindow(0)), next, last)
		next = last.Add(Every)
		if clock.SleepWall(ctx, minWall) != nil {
			return
		}
	}
}

// Wait waits for the sampler; the world's context must have ended.
func (s *Set) Wait() { <-s.done }

// Align makes each series end at the value the snapshot's panels
// show. Samples are taken every Every of lab time, so the last one
// can be older than the snapshot, and paused it stays so: the chart would
// say "now 174" beside a queue panel's 170.
func Align(series []State, snap broker.Snapshot) {
	now := map[string]int64{}
	for _, smp := range samplesOf(snap) {
		now[smp.name] = smp.value
	}
	for i := range series {
		s := &series[i]
		if v, ok := now[s.Name]; ok && len(s.Values) > 0 {
			s.Values[len(s.Values)-1] = v
		}
	}
}
