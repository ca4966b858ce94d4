package lab

import (
	"sort"
	"sync"
	"time"

	"github.com/mqlab/mqlab/broker"
)

// The lab samples, at a fixed step of lab time, what a chart of backlog
// over time needs: every consumer group's lag(G) and every queue's
// depth(Q). The samples live in the snapshot, so a recording carries them
// and a replay draws the same chart the live screen drew.

// SeriesEvery is the lab time between two samples.
const SeriesEvery = 250 * time.Millisecond

// SeriesLen bounds every series: the newest two minutes of lab time,
// room for a flash sale's rise and its drain.
const SeriesLen = 480

// seriesMinWall is the least wall time between two reads of the cluster:
// at 10x a step of lab time is 25 ms of wall time, and reading the
// cluster that often would cost more than the chart is worth. The steps
// that pass between two reads take the value of the read that follows
// them.
const seriesMinWall = 40 * time.Millisecond

// SeriesState is one lab value sampled every Every of lab time.
type SeriesState struct {
	Name   string        `json:"name"`  // the lab value: "lag(billing)", "depth(receipts)"
	Func   string        `json:"func"`  // "lag" or "depth"
	Of     string        `json:"of"`    // the group or queue
	Unit   string        `json:"unit"`  // "msgs"
	Start  time.Time     `json:"start"` // lab time of Values[0]
	Every  time.Duration `json:"every"`
	Values []int64       `json:"values"` // oldest first, at most SeriesLen
}

// End is the lab time of the step after the last value.
func (s SeriesState) End() time.Time { return s.Start.Add(time.Duration(len(s.Values)) * s.Every) }

// seriesSet holds a world's series.
type seriesSet struct {
	mu     sync.Mutex
	byName map[string]*SeriesState
	order  []string
	done   chan struct{} // closed when the sampler has stopped
}

func newSeriesSet() *seriesSet {
	return &seriesSet{byName: map[string]*SeriesState{}, done: make(chan struct{})}
}

// seriesSample is one read of the values, by series name.
type seriesSample struct {
	name, fn, of string
	value        int64
}

// samplesOf reads lag(G) for every group and depth(Q) for every queue.
func samplesOf(snap broker.Snapshot) []seriesSample {
	var out []seriesSample
	for _, g := range snap.Groups {
		out = append(out, seriesSample{name: "lag(" + g.Group + ")", fn: "lag", of: g.Group, value: g.Lag})
	}
	for _, q := range snap.Queues {
		out = append(out, seriesSample{name: "depth(" + q.Config.Name + ")", fn: "depth", of: q.Config.Name, value: int64(q.Counts.Depth())})
	}
	return out
}

// record puts one read into every step from `from` up to and including
// `to` (lab times on the grid of SeriesEvery). A series seen for the first
// time starts at `from`; one not in the read (it cannot be read now) keeps
// its last value, so that every series stays on the same grid.
func (s *seriesSet) record(samples []seriesSample, from, to time.Time) {
	if to.Before(from) {
		return
	}
	steps := int(to.Sub(from)/SeriesEvery) + 1
	if steps > SeriesLen {
		from = from.Add(time.Duration(steps-SeriesLen) * SeriesEvery)
		steps = SeriesLen
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, smp := range samples {
		seen[smp.name] = true
		ss := s.byName[smp.name]
		if ss == nil {
			ss = &SeriesState{Name: smp.name, Func: smp.fn, Of: smp.of, Unit: "msgs", Start: from, Every: SeriesEvery}
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
// oldest values beyond SeriesLen.
func (ss *SeriesState) add(v int64, to time.Time) {
	for !ss.End().After(to) {
		ss.Values = append(ss.Values, v)
	}
	if n := len(ss.Values) - SeriesLen; n > 0 {
		ss.Values = append(ss.Values[:0], ss.Values[n:]...)
		ss.Start = ss.Start.Add(time.Duration(n) * ss.Every)
	}
}

// states copies the series: groups first, then queues, each by name.
func (s *seriesSet) states() []SeriesState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SeriesState, 0, len(s.order))
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

// sampleSeries reads the cluster on every step of lab time until the
// world is retired; a paused clock takes no samples.
func (l *Lab) sampleSeries(w *world) {
	defer close(w.series.done)
	next := l.clock.Now().Truncate(SeriesEvery)
	for {
		if l.clock.SleepUntil(w.ctx, next) != nil {
			return
		}
		now := l.clock.Now()
		last := now.Truncate(SeriesEvery)
		w.series.record(samplesOf(w.cluster.SnapshotWindow(0)), next, last)
		next = last.Add(SeriesEvery)
		if sleepCtx(w.ctx, seriesMinWall) != nil {
			return
		}
	}
}

// startSeries starts the world's sampler; world.close stops it.
func (l *Lab) startSeries(w *world) {
	w.series = newSeriesSet()
	go l.sampleSeries(w)
}

// stopSeries waits for the sampler; the world's context must have ended.
func (w *world) stopSeries() {
	if w.series != nil {
		<-w.series.done
	}
}

// alignSeries makes each series end at the value the snapshot's panels
// show. Samples are taken every SeriesEvery of lab time, so the last one
// can be older than the snapshot, and paused it stays so: the chart would
// say "now 174" beside a queue panel's 170.
func alignSeries(series []SeriesState, snap broker.Snapshot) {
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
