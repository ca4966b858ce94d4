package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqlab/mqlab/tui"
	"github.com/mqlab/mqlab/tui/source"
)

// Without a terminal, mqlab prints the failover scene.
func TestRootWithoutTerminalPrintsTheScene(t *testing.T) {
	var out bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetArgs(nil)
	root.SetContext(ctxFor(t))
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"nothing acknowledged was lost", "kill leader(orders/0) → n1", "✓ lost == 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a file is a terminal")
	}
}

// A recording made by script --record replays: headless it prints the
// timeline; as a source it plays to its end.
func TestReplayARecording(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	in := strings.NewReader("topic create orders partitions=1\nelect n1 orders/0\nproduce orders key=881\nkill n1\nwait leader(orders/0) != none\n")
	if err := runScript(ctxFor(t), in, &bytes.Buffer{}, "-", scriptFlags{record: rec, timing: "fast"}); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"replay", rec})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"▸ 1: topic create orders partitions=1", "▸ 4: kill n1", "n1 killed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the printed recording:\n%s", want, out.String())
		}
	}

	f, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.NewReplay(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if v := src.View(); !v.Clock.Paused || v.Jobs[len(v.Jobs)-1].Name != "replay" {
		t.Fatalf("the replay opens on %+v, clock %+v; want its first frame, paused", v.Jobs, v.Clock)
	}
	for _, line := range []string{"speed 50x", "resume"} {
		if _, err := src.Exec(context.Background(), tui.ParseOrder(line)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := src.View()
		if v.Jobs[len(v.Jobs)-1].Name == "replay ended" {
			if p := v.Partitions[0]; p.Leader == "" || p.Leader == "n1" {
				t.Errorf("the last frame's orders/0: %+v", p)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replay did not end: %+v", v.Jobs)
		}
		time.Sleep(5 * time.Millisecond)
	}

	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	root = rootCmd()
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"replay", empty})
	if err := root.Execute(); err == nil {
		t.Error("an empty recording replayed")
	}
}

// Given a script instead of a recording, replay says how to run it.
func TestReplayOfAScriptSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scene.mqlab")
	if err := os.WriteFile(path, []byte("topic create orders partitions=1\nkill n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	root := rootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"replay", path})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "is a script of lab commands, not a recording: run it with mqlab script "+path) {
		t.Errorf("replay of a script: %v", err)
	}
}
