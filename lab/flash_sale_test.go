package lab

import (
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mqlab/mqlab/lab/command"
)

// The flash sale, measured: at every pause of testdata/flash-sale.mqlab the
// test reads the backlog and the lab time since the rush began, and the
// rates between pauses must be +600/s during the rush (1,000 in, 400 out)
// and −300/s after it (100 in, 400 out), within 10 %. Lab time runs at
// 10x, so the broker takes 10,000 orders a second of wall time.
func TestFlashSaleBacklogRates(t *testing.T) {
	t.Parallel() // rates are read in lab time, which waits for a busy machine
	if raceEnabled {
		t.Skip("the race detector slows the broker below the 10,000 orders a second of wall time this scene needs; the plain pass measures it")
	}
	src, err := os.ReadFile("testdata/flash-sale.mqlab")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := command.ParseScript(string(src))
	if err != nil {
		t.Fatal(err)
	}
	l := newLab(t)
	ctx := ctxFor(t, 2*time.Minute)
	read := func(fn, arg string) float64 {
		t.Helper()
		s, err := l.Value(ctx, command.Expr{Value: command.Value{Kind: command.ValLab, Func: fn, Arg: arg}})
		if err != nil {
			t.Fatalf("%s(%s): %v", fn, arg, err)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s(%s) = %q: %v", fn, arg, s, err)
		}
		return f
	}
	type sample struct{ at, lag float64 }
	var samples []sample
	failed := l.RunScript(ctx, lines, func(line command.Line, _ Result, err error) {
		if _, ok := line.Cmd.(command.Pause); ok && err == nil {
			samples = append(samples, sample{at: read("elapsed", "rush"), lag: read("lag", "billing")})
		}
	})
	if len(failed) > 0 {
		t.Fatal(ScriptError(failed))
	}
	if len(samples) != 4 {
		t.Fatalf("want 4 pauses in the script, got %d", len(samples))
	}
	rate := func(a, b sample) float64 { return (b.lag - a.lag) / (b.at - a.at) }
	for _, c := range []struct {
		what string
		a, b sample
		want float64
	}{
		{"during the rush", samples[0], samples[1], 600},
		{"after the rush", samples[2], samples[3], -300},
	} {
		got := rate(c.a, c.b)
		t.Logf("%s: backlog %.0f at %.2fs, %.0f at %.2fs of lab time: %+.0f/s", c.what, c.a.lag, c.a.at, c.b.lag, c.b.at, got)
		if math.Abs(got-c.want) > math.Abs(c.want)/10 {
			t.Errorf("%s the backlog changed by %+.0f/s; want %+.0f/s within 10 %%", c.what, got, c.want)
		}
	}
}

// A group that starts at the latest offset counts its lag from where it
// started, not from the log start: the orders before it are not its
// backlog, and it is caught up as soon as it has started.
func TestLagFromLatestCountsFromWhereItStarted(t *testing.T) {
	t.Parallel() // on a lab of its own, it mostly waits on lab time
	l := newLab(t)
	mustRun(t, l,
		"cluster nodes=1",
		"topic create orders partitions=1",
		"produce orders count=50",
		"consumer start shipping-1 group=shipping topic=orders from=latest",
		"wait lag(shipping) == 0 timeout=5s",
		"produce orders count=5",
		"wait delivered(shipping) == 5 timeout=5s",
		"wait lag(shipping) == 0 timeout=5s",
		"expect delivered(shipping) == 5",
		// A group from the earliest offset has the whole log to read.
		"consumer start billing-1 group=billing topic=orders rate=1/s",
		"expect lag(billing) >= 54",
	)
}
