package source

import (
	"slices"
	"time"

	"github.com/mqlab/mqlab/lab"
	"github.com/mqlab/mqlab/tui/view"
)

// chartSpreads bounds the retry spreads a view.State carries: the chart
// has room for a few histograms, one above the other.
const chartSpreads = 3

// chartsOf maps the lab's sampled series and its retries.
func chartsOf(snap *lab.Snapshot) view.Charts {
	return view.Charts{Series: seriesOf(snap.Series), Retries: retriesOf(snap.Retries)}
}

// seriesOf maps lag(G), in offsets, and depth(Q), in messages, over time. When some series moved,
// those that stayed at zero all along are left out: the chart's rows are
// few, and a queue that stayed empty says less than a group that fell
// behind. When none moved, all are drawn, flat: nothing is backlogged.
func seriesOf(ss []lab.SeriesState) []view.Series {
	out := make([]view.Series, 0, len(ss))
	moved := map[string]bool{}
	for _, s := range ss {
		vals := make([]float64, len(s.Values))
		for i, v := range s.Values {
			vals[i] = float64(v)
			if v != 0 {
				moved[s.Name] = true
			}
		}
		unit := s.Unit
		if s.Func == "lag" {
			// Lag counts offsets, as lag(G) and the groups panel say: on
			// a compacted topic it counts emptied ones, not messages.
			unit = "offsets"
		}
		out = append(out, view.Series{Name: s.Name, Unit: unit, Every: s.Every, Values: vals})
	}
	if len(moved) > 0 {
		out = slices.DeleteFunc(out, func(s view.Series) bool { return !moved[s.Name] })
	}
	return out
}

// retriesOf turns the retries the clients scheduled into one spread per
// client: when each retry came back (its message received again, its
// record tried again), measured from the message's first failure (the
// failure before its attempt 2). That is what retry_peak counts, so the
// chart and the value a lesson reads agree: a queue that hands a nacked
// message back early shows where it really arrived, and a retry not back
// yet is not drawn. Messages that failed together, without jitter, come
// back together: the spread shows waves at 1s, 3s, 7s; with full jitter it
// is smeared over the whole range. A message whose first retry has left
// the window is left out: its times could not be measured from the same
// start.
func retriesOf(rs []lab.RetryState) []view.RetrySpread {
	type msg struct{ client, id string }
	first := map[msg]time.Time{}
	for _, r := range rs {
		if r.Attempt == 2 {
			if _, ok := first[msg{r.Client, r.Message}]; !ok {
				first[msg{r.Client, r.Message}] = r.Failed
			}
		}
	}
	var out []view.RetrySpread
	at := map[string]int{}
	for _, r := range rs {
		t0, ok := first[msg{r.Client, r.Message}]
		if !ok || r.Arrived.IsZero() {
			continue
		}
		i, ok := at[r.Client]
		if !ok {
			if len(out) == chartSpreads {
				continue
			}
			i = len(out)
			at[r.Client] = i
			out = append(out, view.RetrySpread{Name: "retries of " + r.Client})
		}
		out[i].Times = append(out[i].Times, max(0, r.Arrived.Sub(t0)))
	}
	return out
}

// drainJob is a running check's progress as a job.
func drainJob(d *lab.DrainState) view.Job {
	name := "check: draining"
	if d.Reading != "" {
		name += " " + d.Reading
	}
	return view.Job{Name: name, Done: int64(d.Done), Total: int64(d.Total)}
}
