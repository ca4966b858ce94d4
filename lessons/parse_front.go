package lessons

// A lesson's front matter: the YAML between the first two --- lines with
// its id, title, summary, concepts and minutes.

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mqlab/mqlab/lab/command"
)

// frontMatter reads the YAML between the first two --- lines and returns
// the lines after it.
func (p *parser) frontMatter(lines []srcLine) ([]srcLine, bool) {
	p.frontLine = 1
	if len(lines) == 0 || strings.TrimSpace(lines[0].text) != "---" {
		p.problem(1, 0, "a lesson starts with front matter: a line ---, then id, title and concepts, then ---")
		p.les.ID, p.les.Title = "", ""
		return lines, true
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimRight(lines[i].text, " \t"); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		p.problem(1, 0, "the front matter opened here is never closed with a line ---")
		return nil, false
	}
	var fm strings.Builder
	for _, l := range lines[1:end] {
		fm.WriteString(l.text)
		fm.WriteByte('\n')
	}
	p.yaml(fm.String(), end+1)
	return lines[end+1:], true
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var frontKeys = []string{"id", "title", "summary", "concepts", "minutes"}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// yaml reads the front matter; closeLine is the line of its closing ---.
// A YAML line n is file line n+1.
func (p *parser) yaml(src string, closeLine int) {
	m := p.frontMapping(src)
	if m == nil {
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			p.problem(k.Line+1, 0, "front matter: %s is given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		p.frontKey(k.Value, k.Line+1, v)
	}
	for _, req := range []string{"id", "title", "concepts"} {
		if !seen[req] {
			p.problem(1, 0, "the front matter (lines 1–%d) has no %s", closeLine, req)
		}
	}
	if seen["concepts"] && len(p.les.Concepts) == 0 && p.conceptsLine > 0 {
		p.problem(p.conceptsLine, 0, "front matter: concepts is empty; name what the lesson teaches")
	}
}

// frontMapping decodes the front matter's YAML into its mapping of keys,
// or reports why it is none and returns nil.
func (p *parser) frontMapping(src string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		line, msg := 1, err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line, msg = n+1, m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		p.problem(line, 0, "front matter: %s", msg)
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		p.problem(1, 0, "the front matter is empty; it needs id, title and concepts")
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		p.problem(m.Line+1, 0, "the front matter is a list of key: value lines (id, title, concepts…)")
		return nil
	}
	return m
}

// frontKey reads one key of the front matter, at file line line.
func (p *parser) frontKey(key string, line int, v *yaml.Node) {
	switch key {
	case "id", "title", "summary":
		if v.Kind != yaml.ScalarNode {
			p.problem(line, 0, "front matter: %s is one line of text", key)
			return
		}
		val := strings.TrimSpace(v.Value)
		switch key {
		case "id":
			if !idRE.MatchString(val) {
				p.problem(line, 0, "front matter: id %q: use lower-case letters, digits and dashes, like durability", val)
			}
			p.les.ID = val
		case "title":
			if val == "" {
				p.problem(line, 0, "front matter: title is empty; give the lesson a title, like \"Durability: acks 0, 1 and all\"")
			}
			p.les.Title = val
		case "summary":
			p.les.Summary = val
		}
	case "concepts":
		p.conceptsLine = line
		p.frontConcepts(line, v)
	case "minutes":
		var n int
		if v.Kind != yaml.ScalarNode || v.Decode(&n) != nil || n <= 0 {
			p.problem(line, 0, "front matter: minutes %q: want a whole number of minutes, like 10", v.Value)
			return
		}
		p.les.Minutes = n
	default:
		p.problem(line, 0, "front matter: unknown key %q; the keys are %s%s", key, strings.Join(frontKeys, ", "), command.DidYouMean(key, frontKeys))
	}
}

// frontConcepts reads the list of concepts, each a short name once.
func (p *parser) frontConcepts(line int, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		p.problem(line, 0, "front matter: concepts is a list, like concepts: [acks, replication]")
		return
	}
	dup := map[string]bool{}
	for _, c := range v.Content {
		name := strings.TrimSpace(c.Value)
		switch {
		case c.Kind != yaml.ScalarNode || name == "":
			p.problem(c.Line+1, 0, "front matter: each concept is a short name")
			continue
		case dup[name]:
			p.problem(c.Line+1, 0, "front matter: concept %q is listed twice", name)
			continue
		}
		dup[name] = true
		p.les.Concepts = append(p.les.Concepts, name)
	}
}
