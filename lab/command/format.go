package command

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// printer builds the canonical text of a command: words, then options in
// table order, values quoted only when they must be.
type printer struct{ parts []string }

func (p *printer) word(s string) *printer { p.parts = append(p.parts, s); return p }

func (p *printer) opt(key, value string) *printer {
	p.parts = append(p.parts, key+"="+value)
	return p
}

func (p *printer) optIf(cond bool, key, value string) *printer {
	if cond {
		p.opt(key, value)
	}
	return p
}

func (p *printer) String() string { return strings.Join(p.parts, " ") }

func words(ws ...string) *printer { return &printer{parts: ws} }

// quoteText writes free text so that the lexer reads it back unchanged:
// bare when it is one plain word, in double quotes otherwise.
func quoteText(s string) string {
	if s == "" {
		return `""`
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			continue
		}
		switch r {
		case '.', '_', '/', ':', '{', '}', '@', ',', '%', '*', '~', '^', '\'', '&', ';', '?', '[', ']', '$':
			continue
		case '-', '+':
			if i > 0 || len(s) > 1 {
				continue
			}
		}
		return strconv.Quote(s)
	}
	return s
}

// formatDuration writes a duration in the largest unit that divides it.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// formatRate writes messages per second as N/s, or as N/m when a whole
// number per minute reads better than a long fraction per second (20/m).
func formatRate(perSecond float64) string {
	perMinute := math.Round(perSecond * 60)
	if perSecond != math.Trunc(perSecond) && perMinute/60 == perSecond {
		return formatFloat(perMinute) + "/m"
	}
	return formatFloat(perSecond) + "/s"
}

var sizeUnits = []struct {
	name  string
	bytes int64
}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}}

// formatSize writes bytes in the largest unit that divides them.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n != 0 && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// PartitionsText names a topic's partitions for a message: "partitions 0
// to 2", or "only partition 0" for a topic of one.
func PartitionsText(n int) string {
	if n == 1 {
		return "only partition 0"
	}
	return fmt.Sprintf("partitions 0 to %d", n-1)
}
