package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/tui/view"
)

// A truncation flashes for a few frames: the cut cells show ✂ and the
// row alternates; the words stay after the flash.
func TestTruncationFlash(t *testing.T) {
	// The scene's first new epoch of orders/0 after n1 was cut off.
	cut := sceneFrame(t, "command", "partition n1")
	before, after := 0, 0
	for i := cut; i < scene(t).Frames() && after == 0; i++ {
		if v := sceneView(t, i); v.Partitions[0].Leader != "" && v.Partitions[0].Leader != "n1" {
			before, after = i-1, i
		}
	}
	if after == 0 {
		t.Fatal("the scene has no new leader of orders/0")
	}
	from, to := sceneView(t, before).Partitions[0].Epoch, sceneView(t, after).Partitions[0].Epoch
	d := newSceneSource(t, before)
	m := New(d, Options{})
	m.Update(teaSize(120, 40))
	m.pull()
	d.goTo(after)
	m.pull()
	if ec, ok := m.ctx.EpochFlash["orders/0"]; !ok || ec.From != from || ec.To != to || to <= from {
		t.Fatalf("epoch change of orders/0 from %d to %d not noticed: %+v", from, to, m.ctx.EpochFlash)
	}
	if want := fmt.Sprintf("epoch %d (new, was %d)", to, from); !strings.Contains(m.View(), want) {
		t.Errorf("the new epoch is not named %q:\n%s", want, m.View())
	}
	d.goTo(sceneFrame(t, "truncation", "orders/0 on n1"))
	m.pull()
	if len(m.ctx.TruncFlash) == 0 {
		t.Fatal("the truncation does not flash")
	}
	if cmd := m.flashCmd(); cmd == nil && !m.ticking {
		t.Fatal("no flash ticks scheduled")
	}
	for i := 0; i < truncFlashFrames+1; i++ {
		m.Update(flashTickMsg{})
	}
	if len(m.ctx.TruncFlash) != 0 {
		t.Errorf("the flash does not end: %v", m.ctx.TruncFlash)
	}
	if !strings.Contains(m.View(), "truncated:") {
		t.Errorf("after the flash the truncation is no longer named:\n%s", m.View())
	}
}

// A source that does not date its truncations still gets the flash and
// the words: the TUI dates them by when it first saw them.
func TestUndatedTruncation(t *testing.T) {
	v := sceneEnd(t)
	for i := range v.Partitions[0].Replicas {
		if tr := v.Partitions[0].Replicas[i].Truncation; tr != nil {
			tr.At = time.Time{}
		}
	}
	src := newFakeSource(view.State{Time: v.Time})
	m := New(src, Options{})
	t.Cleanup(m.Close)
	m.Update(teaSize(120, 40))
	src.mu.Lock()
	src.state = v
	src.mu.Unlock()
	m.Update(changeMsg{})
	if len(m.ctx.TruncFlash) == 0 {
		t.Error("an undated truncation does not flash")
	}
	if !strings.Contains(m.View(), "n1 truncated:") {
		t.Errorf("an undated truncation is not named:\n%s", m.View())
	}
}
