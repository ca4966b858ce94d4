package lessons

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mqlab/mqlab/lab/command"
)

// The curriculum: one file per lesson, named NN-name.md so that the
// number (the curriculum item it teaches) orders them.
//
//go:embed curriculum/*.md
var curriculumFS embed.FS

var curriculum = sync.OnceValues(func() ([]*Lesson, error) {
	return parseAll(curriculumFS, "curriculum")
})

func parseAll(fsys fs.FS, dir string) ([]*Lesson, error) {
	names, err := fs.Glob(fsys, dir+"/*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Lesson
	var problems Problems
	ids := map[string]string{}
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		les, err := Parse(name, src)
		if err != nil {
			if ps, ok := err.(Problems); ok {
				problems = append(problems, ps...)
				continue
			}
			return nil, err
		}
		if prev, ok := ids[les.ID]; ok {
			problems = append(problems, Problem{File: name, Line: 1, Msg: fmt.Sprintf("id %s is also the id of %s", les.ID, prev)})
			continue
		}
		ids[les.ID] = name
		out = append(out, les)
	}
	if len(problems) > 0 {
		return out, problems
	}
	return out, nil
}

// Curriculum returns the embedded lessons in curriculum order. They are
// parsed once; the slice is the caller's, the lessons are shared and must
// not be changed.
func Curriculum() ([]*Lesson, error) {
	les, err := curriculum()
	return append([]*Lesson(nil), les...), err
}

// Find returns an embedded lesson by its id ("durability"), its file name
// without .md ("11-durability") or its number ("11").
func Find(ref string) (*Lesson, error) {
	all, err := Curriculum()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, l := range all {
		stem := strings.TrimSuffix(path.Base(l.File), ".md")
		num, _, _ := strings.Cut(stem, "-")
		if ref == l.ID || ref == stem || sameNumber(ref, num) {
			return l, nil
		}
		ids = append(ids, l.ID)
	}
	return nil, fmt.Errorf("no lesson %q; the lessons are %s%s", ref, strings.Join(ids, ", "), command.DidYouMean(ref, ids))
}

// sameNumber says whether ref is the lesson number num ("3" and "03").
func sameNumber(ref, num string) bool {
	a, err1 := strconv.Atoi(ref)
	b, err2 := strconv.Atoi(num)
	return err1 == nil && err2 == nil && a == b && a > 0
}

// Resolve finds a lesson by a reference a learner types: a path to a
// Markdown file (anything ending in .md, or an existing file), or an
// embedded lesson's id, file name or number.
func Resolve(ref string) (*Lesson, error) {
	if strings.HasSuffix(ref, ".md") {
		return Load(ref)
	}
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		return Load(ref)
	}
	return Find(ref)
}
