package queue

// A bounded memory of recent keys, by which a queue recognises a
// transfer or an ack it has already done.

// recentSet remembers the last n keys added, first in first out.
type recentSet[V any] struct {
	n    int
	m    map[string]V
	fifo []string
	head int
}

func newRecentSet[V any](n int) recentSet[V] { return recentSet[V]{n: n, m: map[string]V{}} }

func (s *recentSet[V]) add(k string, v V) {
	if _, ok := s.m[k]; ok {
		s.m[k] = v
		return
	}
	s.m[k] = v
	s.fifo = append(s.fifo, k)
	if len(s.fifo)-s.head > s.n {
		delete(s.m, s.fifo[s.head])
		s.fifo[s.head] = ""
		s.head++
		if s.head > s.n {
			s.fifo = append([]string(nil), s.fifo[s.head:]...)
			s.head = 0
		}
	}
}

func (s *recentSet[V]) get(k string) (V, bool) {
	v, ok := s.m[k]
	return v, ok
}

func (s *recentSet[V]) has(k string) bool {
	_, ok := s.m[k]
	return ok
}

func (s *recentSet[V]) keys() []string { return append([]string(nil), s.fifo[s.head:]...) }
