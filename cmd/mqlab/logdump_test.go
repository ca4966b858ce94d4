package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqlab/mqlab/broker/partlog"
)

// mqlab log dump prints a segment file the lab wrote, and says what is
// wrong with a path that is not one.
func TestLogDumpFromTheShell(t *testing.T) {
	dir := writeSegment(t, "881", "order 881 placed")
	out, _, err := runRoot("log", "dump", "--records", filepath.Join(dir, partlog.SegmentFileName(0, partlog.LogSuffix)))
	if err != nil || !strings.Contains(out, "baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 7") ||
		!strings.Contains(out, "key: 881 payload: order 881 placed") {
		t.Errorf("log dump: %v\n%s", err, out)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, "is a folder"},
		{filepath.Join(dir, "missing.log"), "no such file"},
	} {
		if _, _, err := runRoot("log", "dump", tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("log dump %s: %v; want an error saying %q", tc.path, err, tc.want)
		}
	}
}

// writeSegment writes a partition log in a fresh folder, one batch of one
// record with key for each value, at leader epoch 7, and returns the
// folder.
func writeSegment(t *testing.T, key string, values ...string) string {
	t.Helper()
	dir := t.TempDir()
	l, err := partlog.New(partlog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AttachDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if _, err := l.Append(partlog.Batch{Records: []partlog.Record{{Timestamp: 1e15, Key: []byte(key), Value: []byte(v)}}}, 7); err != nil {
			t.Fatal(err)
		}
	}
	l.DetachDir()
	return dir
}

// log dump reads a damaged segment file to the damage and says what it
// found there, without a panic, then exits with status 2 naming the
// damage; a file that is no segment file is refused with status 1.
func TestLogDumpDamagedFiles(t *testing.T) {
	dir := writeSegment(t, "k", "order 881 placed", "order 882 placed")
	name := partlog.SegmentFileName(0, partlog.LogSuffix)
	good, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-3] ^= 0xff // in the second batch's value, under its CRC
	bad := t.TempDir()
	for _, tc := range []struct {
		what   string
		file   string
		data   []byte
		wants  []string // in the output
		status int      // the exit status: 0, 1 (not read) or 2 (damaged)
		err    string   // what the error says
	}{
		{"whole", name, good, []string{"baseOffset: 1 lastOffset: 1", "crcValid: true"}, 0, ""},
		{"torn tail", name, good[:len(good)-5], []string{"baseOffset: 0 lastOffset: 0", "not a whole batch"}, 2, "80 bytes at position 85 that are not a whole batch"},
		{"flipped byte", name, flipped, []string{"baseOffset: 0 lastOffset: 0 count: 1 partitionLeaderEpoch: 7 position: 0", "crcValid: true", "crcValid: false"}, 2, "the batch at position 85 (offsets 1–1) fails its CRC"},
		{"empty", name, nil, []string{"Log starting offset: 0"}, 0, ""},
		{"garbage", name, bytes.Repeat([]byte{0xa5}, 100), []string{"not a whole batch"}, 2, "100 bytes at position 0"},
		{"index cut short", partlog.SegmentFileName(0, partlog.IndexSuffix), make([]byte, 13), []string{"not a whole entry"}, 2, "a torn entry of 5 bytes at position 8"},
		{"not a segment", "orders.txt", good, nil, 1, "not a segment file"},
	} {
		path := filepath.Join(bad, tc.file)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, err := runRoot("log", "dump", "--records", path)
		status := 0
		if err != nil {
			status = 1
			var st exitStatus
			if errors.As(err, &st) {
				status = st.code
			}
		}
		if status != tc.status || (tc.err != "") != (err != nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: exit status %d, error %v; want %d and an error saying %q", tc.what, status, err, tc.status, tc.err)
		}
		for _, w := range tc.wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the dump does not say %q:\n%s", tc.what, w, out)
			}
		}
	}
}
