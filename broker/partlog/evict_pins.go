package partlog

import (
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"weak"
)

// A snapshot's closed segments, held by where they are in their files
// (see evict.go).

// filePin is one closed segment of a snapshot, read from its file.
type filePin struct {
	path    string
	batches []batchRef // the segment's batches when the snapshot was taken

	mu   sync.Mutex
	data [][]byte // the batches' bytes, once the file was about to go
}

// pins are the segment files live snapshots read, by path.
var pins = struct {
	sync.Mutex
	byPath map[string]map[weak.Pointer[filePin]]struct{}
}{byPath: make(map[string]map[weak.Pointer[filePin]]struct{})}

// pinFile makes a pin on the segment file at path for a snapshot. The
// pin lasts as long as the snapshot holds it.
func pinFile(path string, batches []batchRef) *filePin {
	p := &filePin{path: path, batches: batches}
	wp := weak.Make(p)
	pins.Lock()
	m := pins.byPath[path]
	if m == nil {
		m = make(map[weak.Pointer[filePin]]struct{})
		pins.byPath[path] = m
	}
	m[wp] = struct{}{}
	pins.Unlock()
	runtime.AddCleanup(p, unpin, pinKey{path, wp})
	return p
}

type pinKey struct {
	path string
	wp   weak.Pointer[filePin]
}

func unpin(k pinKey) {
	pins.Lock()
	defer pins.Unlock()
	if m := pins.byPath[k.path]; m != nil {
		delete(m, k.wp)
		if len(m) == 0 {
			delete(pins.byPath, k.path)
		}
	}
}

// materializePins reads into memory the batches of every live snapshot
// that reads the segment file at path (every file under the folder path,
// when dir), before that file is removed or rewritten.
func materializePins(path string, dir bool) {
	path = filepath.Clean(path)
	match := func(p string) bool {
		return p == path || dir && strings.HasPrefix(p, path+string(filepath.Separator))
	}
	if dir {
		// A whole folder's pins may include those of a snapshot a store
		// has just replaced, which would otherwise be read in whole
		// before the collector noticed that nobody holds it.
		pins.Lock()
		any := false
		for p := range pins.byPath {
			any = any || match(p)
		}
		pins.Unlock()
		if !any {
			return
		}
		runtime.GC()
	}
	var live []*filePin
	pins.Lock()
	for p, m := range pins.byPath {
		if !match(p) {
			continue
		}
		for wp := range m {
			if fp := wp.Value(); fp != nil {
				live = append(live, fp)
			}
		}
		delete(pins.byPath, p)
	}
	pins.Unlock()
	for _, fp := range live {
		fp.materialize()
	}
}

func (p *filePin) materialize() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.data != nil {
		return
	}
	// What cannot be read now cannot be later either: the snapshot's
	// reader reports it.
	p.data, _ = batchesData(p.path, p.batches, nil)
}

// segmentBytes returns the bytes of every batch of the pinned segment.
func (p *filePin) segmentBytes() ([][]byte, error) {
	p.mu.Lock()
	have := p.data
	p.mu.Unlock()
	if have != nil {
		return have, nil
	}
	d, err := batchesData(p.path, p.batches, nil)
	if err != nil {
		// The file may have gone after its batches came into memory.
		p.mu.Lock()
		have = p.data
		p.mu.Unlock()
		if have != nil {
			return have, nil
		}
		return nil, fmt.Errorf("snapshot: segment file %s: %w", filepath.Base(p.path), err)
	}
	return d, nil
}

// writeBatches writes what follows a pinned segment's frame header: each
// batch's prefix and bytes, reading those kept only in the file.
func (p *filePin) writeBatches(w io.Writer) error {
	data, err := p.segmentBytes()
	if err != nil {
		return err
	}
	var pre [20]byte
	for j := range p.batches {
		if _, err := w.Write(p.batches[j].appendPrefix(pre[:0])); err != nil {
			return err
		}
		if _, err := w.Write(data[j]); err != nil {
			return err
		}
	}
	return nil
}

// crc is the checksum of the pinned segment's frame, whose header is head.
func (p *filePin) crc(head []byte) (uint32, error) {
	w := crcWriter{crc: crc32.Update(0, castagnoli, head)}
	err := p.writeBatches(&w)
	return w.crc, err
}

type crcWriter struct{ crc uint32 }

func (w *crcWriter) Write(p []byte) (int, error) {
	w.crc = crc32.Update(w.crc, castagnoli, p)
	return len(p), nil
}
