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
// record tried again), in lab time since the client's first failure, the
// very times retry_peak counts. Retries that came back apart are drawn
// apart, as the gateway saw them: two batches that failed half a second
// apart come back as two waves half a second apart, not as one wave of
// both. Each spread carries its client's retry_peak, read from the same
// retries, so the chart's tallest bar and the lab value agree. A retry not
// back yet is not drawn.
func retriesOf(rs []lab.RetryState) []view.RetrySpread {
	first := map[string]time.Time{}
	for _, r := range rs {
		if t, ok := first[r.Client]; !ok || r.Failed.Before(t) {
			first[r.Client] = r.Failed
		}
	}
	var out []view.RetrySpread
	at := map[string]int{}
	for _, r := range rs {
		if r.Arrived.IsZero() {
			continue
		}
		i, ok := at[r.Client]
		if !ok {
			if len(out) == chartSpreads {
				continue
			}
			i = len(out)
			at[r.Client] = i
			out = append(out, view.RetrySpread{Name: "retries of " + r.Client, Window: lab.RetryWindow, Peak: lab.RetryPeak(rs, r.Client)})
		}
		out[i].Times = append(out[i].Times, max(0, r.Arrived.Sub(first[r.Client])))
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
