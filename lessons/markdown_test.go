package lessons

import (
	"slices"
	"testing"
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
