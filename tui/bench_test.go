package tui

import (
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// benchView draws the whole screen at 200×60 over 3 nodes and 12
// partitions whose logs hold a million retained messages each; the source
// sends a window of each log and the panel draws what fits. Target: at
// most 4 ms a frame.
func benchView(b *testing.B, profile termenv.Profile, window int) {
	lipgloss.SetColorProfile(profile)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	src := newFakeSource(bigState(window))
	m := New(src, Options{})
	defer m.Close()
	m.Update(teaSize(200, 60))
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

func BenchmarkView200x60(b *testing.B)          { benchView(b, termenv.Ascii, 32) }
func BenchmarkView200x60TrueColor(b *testing.B) { benchView(b, termenv.TrueColor, 32) }
func BenchmarkView200x60Window256(b *testing.B) { benchView(b, termenv.TrueColor, 256) }
