package lessons

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Lines indented four spaces after a blank line are code, kept line by
// line as written, so that a command shown that way can be copied; an
// indented line inside a paragraph, or under a list item, is not.
func TestMarkdownIndentedCode(t *testing.T) {
	md := "In a second terminal:\n\n    kcat -b 127.0.0.1:19092 -L\n    seq 1 5 | kcat -b 127.0.0.1:19092 -P -t orders\n\n" +
		"Or in Python:\n\n    from kafka import KafkaProducer\n\n    p.flush()\nThen look.\n\n" +
		"A paragraph that goes on\n    over an indented line.\n\n- an item\n\n    its second paragraph"
	bs := ReadMarkdown(md)
	var kinds []MDKind
	for _, b := range bs {
		kinds = append(kinds, b.Kind)
	}
	want := []MDKind{MDParagraph, MDCode, MDParagraph, MDCode, MDParagraph, MDParagraph, MDItem, MDParagraph}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v: %+v", kinds, want, bs)
	}
	if got := bs[1].Rows; !slices.Equal(got, []string{"kcat -b 127.0.0.1:19092 -L", "seq 1 5 | kcat -b 127.0.0.1:19092 -P -t orders"}) {
		t.Errorf("the first block's lines: %q", got)
	}
	if got := bs[3].Rows; !slices.Equal(got, []string{"from kafka import KafkaProducer", "", "p.flush()"}) {
		t.Errorf("the second block's lines: %q", got)
	}
	if bs[4].Text != "Then look." || bs[4].Gap {
		t.Errorf("the line after the code: %+v", bs[4])
	}
	if bs[5].Text != "A paragraph that goes on over an indented line." {
		t.Errorf("a paragraph's indented line: %q", bs[5].Text)
	}
}

// In the transcript an indented code line wider than a terminal breaks at
// its spaces, indented under itself, and loses nothing.
func TestTranscriptWrapsLongCode(t *testing.T) {
	long := "  kcat -b 127.0.0.1:19092 -P -t orders -X enable.idempotence=true -X client.id=me -X linger.ms=5"
	var b strings.Builder
	tr := &transcript{w: &b}
	tr.markdown("A stream:\n\n    seq 1 500 |\n    " + long + "\n")
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("%d characters: %q", utf8.RuneCountInString(l), l)
		}
	}
	if !strings.Contains(out, "    seq 1 500 |\n      kcat -b") || strings.Join(strings.Fields(out), " ") != "A stream: seq 1 500 | "+strings.TrimSpace(long) {
		t.Errorf("the code in the transcript:\n%s", out)
	}
}
