// Package fanout hands each value of a stream to every subscriber without
// waiting for any: a subscriber whose buffer is full loses the value and
// counts it, so a slow screen never slows the broker or the lab. The
// broker's events and the lab's timeline both fan out through it.
package fanout

import "sync"

// Subscription receives a stream's values on C until Close.
type Subscription[T any] struct {
	C <-chan T

	c       chan T
	set     *Set[T]
	dropped uint64 // under set.mu
	closed  bool   // under set.mu
}

// Dropped reports how many values the subscriber missed because its
// buffer was full.
func (s *Subscription[T]) Dropped() uint64 {
	s.set.mu.Lock()
	defer s.set.mu.Unlock()
	return s.dropped
}

// Close stops delivery and closes C; closing twice is fine.
func (s *Subscription[T]) Close() {
	s.set.mu.Lock()
	defer s.set.mu.Unlock()
	s.closeLocked()
}

func (s *Subscription[T]) closeLocked() {
	if s.closed {
		return
	}
	s.closed = true
	delete(s.set.subs, s)
	close(s.c)
}

// Set is the subscribers of one stream. The zero Set is ready to use.
type Set[T any] struct {
	mu     sync.Mutex
	subs   map[*Subscription[T]]struct{}
	closed bool
}

// Subscribe adds a subscriber with room for buffer values. After
// CloseAll it returns one whose C is closed already.
func (s *Set[T]) Subscribe(buffer int) *Subscription[T] {
	c := make(chan T, max(buffer, 1))
	sub := &Subscription[T]{C: c, c: c, set: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		sub.closed = true
		close(c)
		return sub
	}
	if s.subs == nil {
		s.subs = map[*Subscription[T]]struct{}{}
	}
	s.subs[sub] = struct{}{}
	return sub
}

// Len is the number of subscribers now.
func (s *Set[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// Send gives v to every subscriber with room for it; the others count it
// as dropped.
func (s *Set[T]) Send(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		select {
		case sub.c <- v:
		default:
			sub.dropped++
		}
	}
}

// CloseAll closes every subscription, and those subscribed later.
func (s *Set[T]) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for sub := range s.subs {
		sub.closeLocked()
	}
}
