package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/mqlab/mqlab/tui/source"
	"github.com/mqlab/mqlab/tui/view"
)

// The teacher's screen with 0 and with 30 students following it over SSH,
// each a real session drawing every state the teacher's screen publishes.
// Frame: one teacher frame (read the lab, draw 100x30), which wakes every
// follower to draw too. Kill: the teacher's kill of n3 until the teacher's
// screen shows n3 down.
//
//	go test -run '^$' -bench Class ./tui/
func BenchmarkClassTeacherFrame(b *testing.B) {
	for _, n := range []int{0, 30} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) {
			m, _ := classWithFollowers(b, n)
			b.ResetTimer()
			for b.Loop() {
				m.pull()
				_ = m.View()
			}
		})
	}
}

func BenchmarkClassTeacherKill(b *testing.B) {
	for _, n := range []int{0, 30} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) {
			m, src := classWithFollowers(b, n)
			down := func() bool {
				m.pull()
				_ = m.View()
				for _, nd := range m.ctx.State.Nodes {
					if nd.ID == "n3" {
						return !nd.Up
					}
				}
				return false
			}
			b.ResetTimer()
			for b.Loop() {
				mustExec(b, src, "kill n3")
				for deadline := time.Now().Add(10 * time.Second); !down(); {
					if time.Now().After(deadline) {
						b.Fatal("the teacher's screen did not show n3 down within 10 s")
					}
				}
				b.StopTimer()
				mustExec(b, src, "restart n3")
				b.StartTimer()
			}
		})
	}
}

// classWithFollowers is a teacher's screen at 100x30 over a lab with a
// topic, shared with n students connected over SSH, each showing it.
func classWithFollowers(b *testing.B, n int) (*Model, view.Source) {
	b.Helper()
	class := source.NewClass()
	_, src := newTestLab(b, "topic create orders partitions=3", "produce orders count=30 acks=all")
	sh := class.Share(src)
	m := New(sh, Options{})
	b.Cleanup(m.Close)
	m.resize(100, 30)
	m.pull()
	b.Cleanup(sh.Close)
	if n == 0 {
		return m, src
	}
	s, err := NewServer(ServeOptions{Addr: "127.0.0.1:0", Code: testCode, Timing: "fast", Class: class, MaxSessions: n})
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Close() })
	for i := range n {
		sc := openScreen(b, s, fmt.Sprintf("s%d", i), FollowCommand)
		sc.waitFor(b, 30*time.Second, "n1 ● up")
		sc.mu.Lock()
		sc.out.Reset() // what they draw from now on is not kept
		sc.mu.Unlock()
	}
	if got := class.Followers(); got != n {
		b.Fatalf("%d followers; want %d", got, n)
	}
	return m, src
}
