package checker

import (
	"fmt"
	"slices"
	"strings"
)

// Finding is one record behind a count of the report: what `check why`
// lists and the Checker panel shows under the count.
type Finding struct {
	MsgID  string `json:"msg_id,omitempty"`
	Client string `json:"client,omitempty"`
	Group  string `json:"group,omitempty"` // a consumer group, or a queue
	Where  string `json:"where,omitempty"` // orders/0, or a queue
	Offset int64  `json:"offset"`          // -1 when not known
	// Last, when above Offset, makes the finding a run of records at
	// Offset…Last with one explanation.
	Last      int64  `json:"last,omitempty"`
	Explained string `json:"explained"`
}

// String is the finding in one line: which message, where, who, why:
// "p-7 at orders/0 offset 4 (group billing, client c1): …".
func (f Finding) String() string {
	var parts []string
	if f.MsgID != "" {
		parts = append(parts, f.MsgID)
	}
	switch {
	case f.Where != "" && f.Last > f.Offset && f.Offset >= 0:
		parts = []string{fmt.Sprintf("%s offsets %d to %d, %d records,", f.Where, f.Offset, f.Last, f.Last-f.Offset+1)}
	case f.Where != "" && f.Offset >= 0:
		parts = append(parts, fmt.Sprintf("at %s offset %d", f.Where, f.Offset))
	case f.Where != "" && f.MsgID != "":
		parts = append(parts, "on "+f.Where)
	case f.Where != "":
		parts = append(parts, f.Where)
	}
	switch {
	case f.Group != "" && f.Client != "":
		parts = append(parts, fmt.Sprintf("(group %s, client %s)", f.Group, f.Client))
	case f.Group != "":
		parts = append(parts, "(group "+f.Group+")")
	case f.Client != "":
		parts = append(parts, "(client "+f.Client+")")
	}
	if len(parts) == 0 {
		return f.Explained
	}
	return strings.Join(parts, " ") + ": " + f.Explained
}

// note adds a finding behind field, keeping at most MaxListed of each.
func (r *Report) note(field string, f Finding) {
	if r.Why == nil {
		r.Why = map[string][]Finding{}
	}
	if len(r.Why[field]) < MaxListed {
		r.Why[field] = append(r.Why[field], f)
	}
}

// Listed is how many records findings name: a run names each of its
// records.
func Listed(fs []Finding) int {
	n := 0
	for _, f := range fs {
		n++
		if f.Last > f.Offset && f.Offset >= 0 {
			n += int(f.Last - f.Offset)
		}
	}
	return n
}

// Clone copies the report, its lists too, so that the copy shares
// nothing with r.
func (r Report) Clone() Report {
	c := r
	c.LostMessages = append([]Missing(nil), r.LostMessages...)
	c.Unreadable = append([]string(nil), r.Unreadable...)
	if r.Why != nil {
		c.Why = make(map[string][]Finding, len(r.Why))
		for k, fs := range r.Why {
			c.Why[k] = slices.Clone(fs)
		}
	}
	c.Ambiguous = nil
	for _, a := range r.Ambiguous {
		a.Groups = slices.Clone(a.Groups)
		c.Ambiguous = append(c.Ambiguous, a)
	}
	return c
}

// noteRun adds a finding behind field, or extends the last one when it
// is the record just before, with the same explanation: a fetch of many
// records reads as one run.
func (r *Report) noteRun(field string, f Finding) {
	if fs := r.Why[field]; len(fs) > 0 {
		last := &fs[len(fs)-1]
		end := max(last.Last, last.Offset)
		if last.Where == f.Where && last.Group == f.Group && last.Client == f.Client && last.Explained == f.Explained && end+1 == f.Offset {
			last.Last = f.Offset
			return
		}
	}
	r.note(field, f)
}

// Explain lists the records behind a field's count: at most MaxListed of
// them, with the count they were taken from. A field the checker keeps no
// records for (confirmed) has none.
func (r Report) Explain(field string) (findings []Finding, count int) {
	count, _ = r.Field(field)
	if field == "lost" {
		for _, m := range r.LostMessages {
			findings = append(findings, Finding{MsgID: m.MsgID, Client: m.Client, Where: m.Where, Offset: m.Offset, Explained: m.Explained})
		}
		return findings, count
	}
	return r.Why[field], count
}

// Ambiguity is records fetched by a client.id that members of several
// groups share, on connections the broker could not tie to one of them:
// they count in no group's deliveries.
type Ambiguity struct {
	Client  string   `json:"client"`
	Groups  []string `json:"groups"`
	Records int      `json:"records"`
}

// Hint says what an ambiguity means and how to end it.
func (a Ambiguity) Hint() string {
	return fmt.Sprintf("%d records fetched by client.id %s could be for group %s: members of these groups share the client.id, and a fetch names no group; give each consumer its own client.id (kcat -X client.id=NAME) to tell them apart",
		a.Records, a.Client, orWords(a.Groups))
}

func orWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	s := ws[0]
	for _, w := range ws[1 : len(ws)-1] {
		s += ", " + w
	}
	return s + " or " + ws[len(ws)-1]
}
