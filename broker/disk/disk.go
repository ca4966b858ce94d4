// Package disk is what a replica writes to its node's "disk": the raft
// log, the stable store (current term, vote) and snapshots. It outlives
// the replica: a kill drops the replica and keeps its disk, a restart
// builds a new replica on it.
package disk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hashicorp/raft"
)

// Disk is what one replica has written to its node's disk.
type Disk struct {
	Logs   *raft.InmemStore // the raft log
	Stable *raft.InmemStore // current term, vote
	Snaps  *SnapshotStore
}

// New returns an empty disk.
func New() *Disk {
	return &Disk{Logs: raft.NewInmemStore(), Stable: raft.NewInmemStore(), Snaps: &SnapshotStore{}}
}

// Hooks is how a replica learns what raft does to its log: which entries
// it stored (the acks=1 point on a leader) and which it is about to delete
// (a truncation or a compaction).
type Hooks interface {
	BeforeStore(logs []*raft.Log)
	AfterStore(logs []*raft.Log)
	BeforeDelete(min, max uint64)
}

// HookedLogStore is the replica's view of its raft log on disk: the disk's
// log, telling Hooks of every store and delete.
type HookedLogStore struct {
	*raft.InmemStore
	Hooks Hooks
}

func (s *HookedLogStore) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

func (s *HookedLogStore) StoreLogs(logs []*raft.Log) error {
	s.Hooks.BeforeStore(logs)
	if err := s.InmemStore.StoreLogs(logs); err != nil {
		return err
	}
	s.Hooks.AfterStore(logs)
	return nil
}

func (s *HookedLogStore) DeleteRange(min, max uint64) error {
	s.Hooks.BeforeDelete(min, max)
	return s.InmemStore.DeleteRange(min, max)
}

// SnapshotStore keeps a replica's latest raft snapshot: in memory, but
// for what it shares with the replica's log or reads from its segment
// files, and past 4 MiB of a snapshot that arrived whole, which waits in
// a temporary file (see chunks). Unlike raft.InmemSnapshotStore it keeps
// the previous snapshot until the new one is closed, so a node killed
// while snapshotting still has one to restart from.
type SnapshotStore struct {
	mu     sync.Mutex
	latest *storedSnapshot
	nextID int
}

type storedSnapshot struct {
	meta raft.SnapshotMeta
	data chunks
}

// chunks is a byte stream kept as pieces. Written bytes are copied into
// fixed-size buffers, so a snapshot of a large log grows without the
// repeated copying of one growing buffer; shared bytes (a partition's
// stored batches, which nobody modifies) are kept by reference, so a
// snapshot of a partition costs its framing, not a copy of its log.
type chunks struct {
	pieces [][]byte
	free   []byte // the unused rest of the newest buffer
	// owned: the last piece is a buffer's and ends where free begins, so
	// the next Write extends it.
	owned      bool
	lastBuffer int   // the size of the newest buffer, 0 before the first
	copied     int64 // bytes written into the buffers (not shared, not sources)
	// later are pieces whose bytes are written when the stream is first
	// read (a partition's segment checksums, see WriteLater).
	later []laterPiece
	fill  *sync.Once
	// sources are pieces written each time the stream is read (a
	// partition's closed segments, read from their files; see
	// WriteSource), by their index in pieces, where they hold nil.
	sources map[int]source
	// mixed: the stream has shared, later or source pieces, so it is a
	// snapshot of the replica's own, mostly held elsewhere. A stream of
	// plain writes only is one that arrived whole from a leader; past
	// spillAt its bytes go to spill, a file, rather than memory.
	mixed     bool
	spill     *os.File
	spillSize int64
}

// spillAt is how many bytes of a snapshot that arrives whole stay in
// memory; the rest go to a temporary file, removed once nothing has it
// open, so a follower that installs a large log's snapshot does not hold
// it all in memory.
const spillAt = 4 << 20

type source struct {
	n   int
	src func(w io.Writer) error
}

type laterPiece struct {
	p    []byte
	fill func([]byte)
}

// A snapshot's written bytes go into buffers that start at
// firstChunkSize and double up to chunkSize: a partition's snapshot
// writes only its framing (its batches are shared, or read from their
// files), a few kilobytes that a megabyte buffer would mostly waste, and
// a replica with files keeps one every few hundred entries.
const (
	firstChunkSize = 16 << 10
	chunkSize      = 1 << 20
)

// minShared is the least WriteShared keeps by reference; smaller pieces
// cost less to copy than to keep track of.
const minShared = 256

// nextChunk is the size of the next buffer, for a write of n bytes.
func (c *chunks) nextChunk(n int) int {
	size := firstChunkSize
	if last := c.lastBuffer; last > 0 {
		size = min(2*last, chunkSize)
	}
	size = max(size, min(n, chunkSize))
	c.lastBuffer = size
	return size
}

func (c *chunks) Write(p []byte) (int, error) {
	n := len(p)
	if c.spill == nil && !c.mixed && c.copied+int64(n) > spillAt {
		c.startSpill()
	}
	if c.spill != nil {
		k, err := c.spill.Write(p)
		c.spillSize += int64(k)
		c.copied += int64(k)
		return k, err
	}
	c.copied += int64(n)
	for len(p) > 0 {
		if len(c.free) == 0 {
			c.free = make([]byte, c.nextChunk(len(p)))
			c.owned = false
		}
		k := copy(c.free, p)
		if last := len(c.pieces) - 1; c.owned {
			c.pieces[last] = c.pieces[last][:len(c.pieces[last])+k]
		} else {
			c.pieces = append(c.pieces, c.free[:k])
			c.owned = true
		}
		c.free, p = c.free[k:], p[k:]
	}
	return n, nil
}

// startSpill opens the file the rest of a plain stream goes to. It is
// removed at once: the open file keeps its bytes until it is closed (or
// collected). Without a file, the stream stays in memory.
func (c *chunks) startSpill() {
	f, err := os.CreateTemp("", "mqlab-snapshot-")
	if err != nil {
		c.mixed = true // keep it in memory
		return
	}
	if os.Remove(f.Name()) != nil {
		// A system that cannot remove an open file would keep it.
		f.Close()
		os.Remove(f.Name())
		c.mixed = true
		return
	}
	c.spill = f
}

// WriteShared appends p by reference (see partlog.SharingWriter).
func (c *chunks) WriteShared(p []byte) (int, error) {
	c.mixed = c.mixed || c.spill == nil
	if c.spill != nil {
		return c.Write(p) // after the spill, everything goes to the file, in order
	}
	if len(p) < minShared {
		return c.Write(p)
	}
	c.pieces = append(c.pieces, p[:len(p):len(p)])
	c.owned = false
	return len(p), nil
}

// WriteLater appends n bytes that fill writes when the stream is first
// read (see partlog.SharingWriter): a snapshot that is never restored or
// sent to a follower never computes them.
func (c *chunks) WriteLater(n int, fill func(p []byte)) (int, error) {
	if c.spill != nil {
		return 0, errors.New("snapshot: bytes to fill later after the stream went to a file")
	}
	c.mixed = true
	p := make([]byte, n)
	c.pieces = append(c.pieces, p)
	c.later = append(c.later, laterPiece{p: p, fill: fill})
	c.owned = false
	if c.fill == nil {
		c.fill = new(sync.Once)
	}
	return n, nil
}

// WriteSource appends n bytes that src writes each time the stream is
// read; none of them are kept (see partlog.SharingWriter).
func (c *chunks) WriteSource(n int, src func(w io.Writer) error) (int, error) {
	if c.spill != nil {
		return 0, errors.New("snapshot: a source piece after the stream went to a file")
	}
	c.mixed = true
	if c.sources == nil {
		c.sources = make(map[int]source)
	}
	c.sources[len(c.pieces)] = source{n: n, src: src}
	c.pieces = append(c.pieces, nil)
	c.owned = false
	return n, nil
}

func (c *chunks) size() int64 {
	var n int64
	for _, b := range c.pieces {
		n += int64(len(b))
	}
	for _, s := range c.sources {
		n += int64(s.n)
	}
	return n + c.spillSize
}

func (c *chunks) reader() io.Reader {
	if c.fill != nil {
		c.fill.Do(func() {
			for _, l := range c.later {
				l.fill(l.p)
			}
		})
	}
	rs := make([]io.Reader, len(c.pieces))
	for i, b := range c.pieces {
		if s, ok := c.sources[i]; ok {
			rs[i] = &sourceReader{source: s}
			continue
		}
		rs[i] = bytes.NewReader(b)
	}
	if c.spill != nil {
		rs = append(rs, io.NewSectionReader(c.spill, 0, c.spillSize))
	}
	return io.MultiReader(rs...)
}

// sourceReader reads a source piece: its bytes are written when it is
// first read and dropped once read to the end, so a stream holds one
// source's bytes at a time.
type sourceReader struct {
	source
	buf     *bytes.Buffer
	started bool
}

func (r *sourceReader) Read(p []byte) (int, error) {
	if !r.started {
		r.started = true
		r.buf = bytes.NewBuffer(make([]byte, 0, r.n))
		if err := r.src(r.buf); err != nil {
			r.buf = nil
			return 0, err
		}
		if r.buf.Len() != r.n {
			n := r.buf.Len()
			r.buf = nil
			return 0, fmt.Errorf("snapshot piece: %d bytes, want %d", n, r.n)
		}
	}
	if r.buf == nil {
		return 0, io.EOF
	}
	n, err := r.buf.Read(p)
	if r.buf.Len() == 0 {
		r.buf = nil
		if n > 0 {
			err = nil
		}
	}
	return n, err
}

func (s *SnapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf("%d-%d-%d", term, index, s.nextID)
	s.mu.Unlock()
	return &snapshotSink{store: s, meta: raft.SnapshotMeta{
		Version:            version,
		ID:                 id,
		Index:              index,
		Term:               term,
		Configuration:      configuration,
		ConfigurationIndex: configurationIndex,
	}}, nil
}

func (s *SnapshotStore) List() ([]*raft.SnapshotMeta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return nil, nil
	}
	m := s.latest.meta
	return []*raft.SnapshotMeta{&m}, nil
}

func (s *SnapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	s.mu.Lock()
	latest := s.latest
	s.mu.Unlock()
	if latest == nil || latest.meta.ID != id {
		return nil, nil, fmt.Errorf("open snapshot %s: no such snapshot", id)
	}
	m := latest.meta
	// Outside the lock: the first read of a partition snapshot computes
	// its checksums.
	return &m, io.NopCloser(latest.data.reader()), nil
}

// Held reports the size of the latest snapshot and how many of its
// bytes the store holds as copies of its own: all of them for a snapshot
// that arrived from a leader, only the framing for a partition replica's
// own, which shares its log's batches or reads them from its files.
func (s *SnapshotStore) Held() (size, copied int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return 0, 0
	}
	return s.latest.meta.Size, s.latest.data.copied
}

// Index reports the raft index of the latest snapshot, 0 if none.
func (s *SnapshotStore) Index() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return 0
	}
	return s.latest.meta.Index
}

type snapshotSink struct {
	store *SnapshotStore
	meta  raft.SnapshotMeta
	buf   chunks
	done  bool
}

func (k *snapshotSink) Write(p []byte) (int, error) { return k.buf.Write(p) }
func (k *snapshotSink) ID() string                  { return k.meta.ID }

// WriteShared keeps p by reference and WriteLater takes bytes to compute
// when the snapshot is read: a partition's snapshot hands over its stored
// batches and its checksums this way (partlog.SharingWriter).
func (k *snapshotSink) WriteShared(p []byte) (int, error) { return k.buf.WriteShared(p) }

func (k *snapshotSink) WriteLater(n int, fill func([]byte)) (int, error) {
	return k.buf.WriteLater(n, fill)
}

// WriteSource takes bytes to write each time the snapshot is read: a
// partition's closed segments, read from their files.
func (k *snapshotSink) WriteSource(n int, src func(io.Writer) error) (int, error) {
	return k.buf.WriteSource(n, src)
}

func (k *snapshotSink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	k.meta.Size = k.buf.size()
	k.store.mu.Lock()
	k.store.latest = &storedSnapshot{meta: k.meta, data: k.buf}
	k.store.mu.Unlock()
	return nil
}

func (k *snapshotSink) Cancel() error {
	k.done = true
	return nil
}
