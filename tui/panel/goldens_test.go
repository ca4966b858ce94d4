package panel

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/keys"
	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

func fmtName(name string, w, h int) string {
	return name + "_" + strconv.Itoa(w) + "x" + strconv.Itoa(h)
}

func TestLabShapedGoldens(t *testing.T) {
	v := labShapedState()
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	for _, c := range []struct {
		name string
		p    Component
		w, h int
	}{
		{"cluster_dead", NewCluster(ctx), 78, 9},
		{"checker_checked", NewChecker(ctx), 28, 5},
		{"checker_checked", NewChecker(ctx), 44, 5},
	} {
		c.p.SetSize(c.w, c.h)
		got := c.p.View()
		checkSize(t, c.name, got, c.w, c.h)
		golden(t, fmtName(c.name, c.w, c.h), got)
	}
	// A partition: each node's row says what it is cut from, and what it
	// leads still reads after it.
	cut := view.State{Nodes: []view.Node{
		{ID: "n1", Up: true, CutFrom: []string{"n2", "n3"}, Leads: []string{"orders/0"}},
		{ID: "n2", Up: true, CutFrom: []string{"n1"}, Leads: []string{"controller"}},
		{ID: "n3", Up: true, CutFrom: []string{"n1"}, Latency: 200 * time.Millisecond},
	}}
	cctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	cctx.State = &cut
	cp := NewCluster(cctx)
	cp.SetSize(78, 9)
	golden(t, "cluster_cut_78x9", cp.View())

	// Without a leader, the header says why: an election under way, or
	// too few replicas up to hold one.
	nl := labShapedState()
	nl.Nodes = []view.Node{{ID: "n1"}, {ID: "n2", Up: true, Leads: []string{"controller"}}, {ID: "n3", Up: true}, {ID: "n4"}}
	p0 := nl.Partitions[0]
	p0.Leader, p0.Replicas = "", append([]view.Replica(nil), p0.Replicas...)
	p0.Replicas[1].Role = "follower"
	// n4's disk recorded epoch 4; its offsets are not known while it is down.
	p1 := view.Partition{Name: "orders/1", Epoch: 4, Replicas: []view.Replica{{Node: "n1", Role: "down"}, p0.Replicas[1], {Node: "n4", Role: "down", Epoch: 4}}}
	nl.Partitions = []view.Partition{p0, p1}
	nctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	nctx.State = &nl
	np := NewCluster(nctx)
	np.SetSize(78, 14)
	got := np.View()
	golden(t, "cluster_noleader_78x14", got)
	for _, row := range lines(got) {
		if strings.Contains(row, "n4") && strings.Contains(row, "down") && !strings.Contains(row, "leads") && (strings.Contains(row, "hwm") || !strings.Contains(row, "not running")) {
			t.Errorf("a down replica's row shows offsets it cannot know: %q", row)
		}
	}

	empty := NewChecker(NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default()))
	empty.ctx.State = &view.State{}
	empty.SetSize(28, 4)
	golden(t, "checker_empty_28x4", empty.View())
}

// The chart of a flash sale: billing's lag rises while the load runs and
// drains after, on an axis in lab seconds; retries come in waves without
// jitter and spread with it. At the width of the 80- and 120-column
// screens.
func TestChartGoldens(t *testing.T) {
	snap := flashSale()
	v := source.ViewOf(&snap)
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	for _, c := range []struct{ w, h int }{{38, 10}, {58, 18}, {58, 5}} {
		p := NewChart(ctx)
		p.SetSize(c.w, c.h)
		got := p.View()
		checkSize(t, "chart", got, c.w, c.h)
		golden(t, fmtName("chart_flash", c.w, c.h), got)
	}
}

// The services panel at the widths it gets on 80- and 120-column screens:
// the outbox keeps its status column, and says how many columns it hides.
func TestServicesGoldens(t *testing.T) {
	snap := outboxSnapshot()
	v := source.ViewOf(&snap)
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &v
	for _, c := range []struct{ w, h int }{{38, 24}, {58, 24}} {
		p := NewServices(ctx)
		p.SetSize(c.w, c.h)
		got := p.View()
		checkSize(t, "services", got, c.w, c.h)
		if !strings.Contains(got, "pending") || !strings.Contains(got, "sent") {
			t.Errorf("services at %d columns hides the outbox status:\n%s", c.w, got)
		}
		golden(t, fmtName("services_outbox", c.w, c.h), got)
	}
}

// squeeze keeps every peak and ends with the newest value.
func TestSqueeze(t *testing.T) {
	vals := []float64{1, 9, 2, 3, 4, 0, 7}
	if got, want := squeeze(vals, 3), []float64{1, 9, 7}; !slices.Equal(got, want) {
		t.Errorf("squeeze by 3: %v, want %v", got, want)
	}
	if got := squeeze(vals, 1); !slices.Equal(got, vals) {
		t.Errorf("squeeze by 1: %v, want it unchanged", got)
	}
}

// The panel lists the records behind each count that is not zero, a few
// each, and says how to see the rest: a broken count's right under its
// row, the others' under all the counts.
func TestCheckerListsTheRecordsBehindACount(t *testing.T) {
	st := view.State{Checker: view.Checker{Fields: []view.CheckField{
		{Name: "confirmed", Value: 240, OK: true},
		{Name: "order_violations", Value: 9, Why: []string{
			"p-2 on orders (group billing, client rdkafka): committed past after p-3, which has the same key (\"881\") and was written after it",
			"p-4 on orders (group billing): committed past after p-5", "p-6 …", "p-8 …", "p-10 …", "p-12 …"}, More: 3},
		{Name: "refetched", Value: 2, OK: true, Why: []string{"orders/0 offset 7 p-7: sent again", "orders/0 offset 8 p-8: sent again"}},
		{Name: "duplicate_deliveries", Value: 0, OK: true},
	}}}
	ctx := NewContext(nil, draw.NewStyles(draw.DefaultTheme), keys.Default())
	ctx.State = &st
	p := NewChecker(ctx)
	p.SetSize(44, 22)
	got := p.View()
	checkSize(t, "checker_why", got, 44, 22)
	golden(t, "checker_why_44x22", got)
	plain := ansi.Strip(got)
	broken, records, next := strings.Index(plain, "✗ order_violations"), strings.Index(plain, "· p-2 on orders"), strings.Index(plain, "✓ refetched")
	info := strings.Index(plain, "why refetched")
	if broken < 0 || records < broken || next < records || info < next {
		t.Errorf("want the broken count's records under its row, refetched's under the counts:\n%s", plain)
	}
	if !strings.Contains(plain, "… 4 more: :check why order_violations") || strings.Contains(plain, "p-12") {
		t.Errorf("want five of order_violations' records and the count of the rest:\n%s", plain)
	}
}
