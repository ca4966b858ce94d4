package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft"
)

// RawRaftFiles is RawRaftFresh with every member writing each entry it
// applies to a file, as a broker's replicas write their segment files:
// the entries' bytes are appended to the newest file of the member's
// folder under dir, written 64 KiB at a time, and a new file starts
// when the next entry would take the newest past the segment size the
// broker's topics roll at (segmentBytes). It is the least a replicated
// log that keeps its data in files must do, so the broker's ratio to it
// is what the broker adds to raft and the disk: decoding nothing, but
// checking, indexing, answering and keeping its books.
func RawRaftFiles(ctx context.Context, groups, batches int, entry []byte, dir string) (Rate, error) {
	var mu sync.Mutex
	var fsms []*fileFSM
	defer func() {
		for _, f := range fsms {
			f.close()
		}
	}()
	newFSM := func(g int, node string) (raft.FSM, error) {
		d := filepath.Join(dir, fmt.Sprintf("raw-%d", g), node)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		f := &fileFSM{dir: d, segment: segmentBytes()}
		mu.Lock()
		fsms = append(fsms, f)
		mu.Unlock()
		return f, nil
	}
	r, err := rawRaft(ctx, groups, batches, entry, true, newFSM)
	mu.Lock()
	defer mu.Unlock()
	for _, f := range fsms {
		f.mu.Lock()
		err = errors.Join(err, f.err)
		f.mu.Unlock()
	}
	return r, err
}

// fileFSM is RawRaftFiles's state machine: it counts, and appends each
// entry to its files. A write that fails stops the writing; RawRaftFiles
// reports it.
type fileFSM struct {
	countFSM
	dir     string
	segment int64

	mu      sync.Mutex
	file    *os.File
	size    int64 // of the newest file, pending bytes included
	files   int
	pending []byte
	err     error
}

// fileFSMPending is how much a fileFSM holds before a write, as a
// partition log's files do.
const fileFSMPending = 64 << 10

func (f *fileFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		if f.file == nil || (f.size > 0 && f.size+int64(len(l.Data)) > f.segment) {
			f.roll()
		}
		f.pending = append(f.pending, l.Data...)
		f.size += int64(len(l.Data))
		if len(f.pending) >= fileFSMPending {
			f.flush()
		}
	}
	return f.countFSM.Apply(l)
}

// roll writes what the newest file holds back and starts the next one.
func (f *fileFSM) roll() {
	f.flush()
	if f.file != nil {
		f.file.Close()
	}
	f.files++
	f.file, f.err = os.OpenFile(filepath.Join(f.dir, fmt.Sprintf("%020d.log", f.files)), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	f.size = 0
}

func (f *fileFSM) flush() {
	if f.file == nil || f.err != nil || len(f.pending) == 0 {
		return
	}
	_, f.err = f.file.Write(f.pending)
	f.pending = f.pending[:0]
}

func (f *fileFSM) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != nil {
		f.file.Close()
		f.file = nil
	}
}
