package partcmd

import "sync"

// Slab hands a partition leader the buffers of its produce entries,
// carved one after another from larger blocks. Every entry is kept (by
// raft, by each replica's log, which stores the batch inside it), so each
// needs memory of its own; taking it from a block costs a slice instead of
// an allocation, and the block is zeroed once rather than entry by entry.
//
// Entries are carved in the order they are proposed and logs drop them in
// that order too (raft compacts its oldest entries, retention deletes the
// oldest segments), so a block is freed once its last entry is, and the
// memory held beyond what the logs hold is at most about one block per
// leader. Each entry is capped at its length: appending to one can never
// reach its neighbour.
type Slab struct {
	mu   sync.Mutex
	free []byte // the rest of the current block
}

const (
	slabBlock = 256 << 10
	// slabMaxEntry is the largest entry carved from a block; larger ones
	// get their own allocation, so a block never ends with much unused.
	slabMaxEntry = slabBlock / 8
)

// Alloc returns a zero-length buffer of capacity n.
func (s *Slab) Alloc(n int) []byte {
	if n > slabMaxEntry {
		return make([]byte, 0, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) < n {
		s.free = make([]byte, slabBlock)
	}
	p := s.free[:0:n]
	s.free = s.free[n:]
	return p
}
