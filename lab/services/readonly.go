package services

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Result is what a read-only query returned: plain values (int64, float64,
// string, nil), safe to keep and print.
type Result struct {
	Columns   []string
	Rows      [][]any
	Truncated bool // more rows matched than MaxRows
}

// MaxRows caps the rows a learner's query or a table view returns.
const MaxRows = 500

// queryTimeout bounds a learner's query in wall time: a runaway join must not
// freeze the screen. SQLite is interrupted when it passes.
const queryTimeout = 5 * time.Second

// Strings returns every cell as text, NULL as "NULL".
func (r Result) Strings() [][]string {
	out := make([][]string, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = make([]string, len(row))
		for j, v := range row {
			out[i][j] = cellText(v)
		}
	}
	return out
}

func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	default:
		return fmt.Sprint(x)
	}
}

// String renders the result as an aligned text table.
func (r Result) String() string {
	cells := r.Strings()
	w := make([]int, len(r.Columns))
	for i, c := range r.Columns {
		w[i] = len([]rune(c))
	}
	for _, row := range cells {
		for i, c := range row {
			if n := len([]rune(c)); n > w[i] {
				w[i] = n
			}
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", w[i]-len([]rune(c))))
			}
		}
		b.WriteString("\n")
	}
	line(r.Columns)
	sep := make([]string, len(w))
	for i := range w {
		sep[i] = strings.Repeat("-", w[i])
	}
	line(sep)
	for _, row := range cells {
		line(row)
	}
	fmt.Fprintf(&b, "(%d row%s", len(r.Rows), plural(len(r.Rows)))
	if r.Truncated {
		fmt.Fprintf(&b, ", more not shown")
	}
	b.WriteString(")\n")
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// sqlShape is what a light scan of SQL text finds: enough to reject
// non-queries with a clear message before SQLite's read-only connection
// rejects them for real.
type sqlShape struct {
	first      string // first keyword, upper case
	statements int    // statements separated by ';' (an empty trailing one not counted)
	comments   bool
	semicolons int
	depth      int // unbalanced '(' minus ')'
}

func scanSQL(s string) (sqlShape, error) {
	var sh sqlShape
	inStmt := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], closer)
				if k < 0 {
					return sh, fmt.Errorf("unterminated %c at byte %d", c, i+1)
				}
				j += k + 1
				if closer != ']' && j < len(s) && s[j] == closer { // doubled quote escapes itself
					j++
					continue
				}
				break
			}
			i = j
			inStmt = true
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			sh.comments = true
			if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
				i += k + 1
			} else {
				i = len(s)
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			sh.comments = true
			k := strings.Index(s[i+2:], "*/")
			if k < 0 {
				return sh, fmt.Errorf("unterminated comment at byte %d", i+1)
			}
			i += k + 4
		case c == ';':
			sh.semicolons++
			if inStmt {
				sh.statements++
			}
			inStmt = false
			i++
		case c == '(' || c == ')':
			if c == '(' {
				sh.depth++
			} else {
				sh.depth--
				if sh.depth < 0 {
					return sh, fmt.Errorf("unbalanced ')' at byte %d", i+1)
				}
			}
			inStmt = true
			i++
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			if !inStmt && sh.statements == 0 && sh.first == "" {
				sh.first = strings.ToUpper(s[i:j])
			}
			inStmt = true
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			inStmt = true
			i++
		}
	}
	if inStmt {
		sh.statements++
	}
	return sh, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// checkQuery accepts one SELECT (or WITH … SELECT) statement.
func checkQuery(q string) error {
	sh, err := scanSQL(q)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrReadOnly, err)
	}
	switch {
	case sh.statements == 0:
		return fmt.Errorf("%w: empty query: write one SELECT statement", ErrReadOnly)
	case sh.statements > 1:
		return fmt.Errorf("%w: one statement only: remove everything after the first ';'", ErrReadOnly)
	case sh.first != "SELECT" && sh.first != "WITH":
		return fmt.Errorf("%w: only SELECT (or WITH … SELECT) is allowed here, not %s: the services' tables can be read, not changed", ErrReadOnly, sh.first)
	}
	return nil
}

// checkWhere accepts a bare WHERE condition: no ';', no comment, balanced
// parentheses, so it cannot close the condition and start something else.
func checkWhere(w string) error {
	sh, err := scanSQL(w)
	if err != nil {
		return fmt.Errorf("%w: WHERE clause: %v", ErrReadOnly, err)
	}
	switch {
	case sh.semicolons > 0:
		return fmt.Errorf("%w: WHERE clause: ';' is not allowed: write one condition, such as status='pending'", ErrReadOnly)
	case sh.comments:
		return fmt.Errorf("%w: WHERE clause: comments are not allowed", ErrReadOnly)
	case sh.depth != 0:
		return fmt.Errorf("%w: WHERE clause: unbalanced parentheses", ErrReadOnly)
	}
	return nil
}

// readOnlyError turns SQLite's refusal on the read-only connection into a
// clear message.
func readOnlyError(err error) error {
	if err == nil {
		return nil
	}
	switch sqliteCode(err) {
	case 8: // SQLITE_READONLY
		return fmt.Errorf("%w: the query tried to change data, and this connection is read-only (%v)", ErrReadOnly, err)
	case 23: // SQLITE_AUTH
		return fmt.Errorf("%w: not allowed on a read-only connection (%v)", ErrReadOnly, err)
	case 1: // SQLITE_ERROR: SQLite gives no code of its own for a missing table, only its words
		if strings.Contains(err.Error(), "no such table") {
			return fmt.Errorf("%w: %v", ErrUnknownTable, err)
		}
	}
	return err
}

// readQuery runs a query on the read-only connection and collects at most
// MaxRows rows.
func (d *database) readQuery(ctx context.Context, q string, args ...any) (Result, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, queryTimeout)
		defer cancel()
	}
	rows, err := d.ro.QueryContext(ctx, q, args...)
	if err != nil {
		return Result{}, readOnlyError(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return Result{}, err
	}
	res := Result{Columns: cols}
	for rows.Next() {
		if len(res.Rows) == MaxRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return Result{}, err
		}
		for i, v := range vals {
			switch x := v.(type) {
			case []byte:
				vals[i] = string(x)
			case time.Time:
				vals[i] = labTime(x)
			}
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return Result{}, readOnlyError(err)
	}
	return res, nil
}

// Query runs a learner's SELECT on the read-only connection.
func (d *database) Query(ctx context.Context, q string) (Result, error) {
	if err := checkQuery(q); err != nil {
		return Result{}, err
	}
	return d.readQuery(ctx, q)
}

// Count counts table's rows matching where (all rows when where is empty),
// on the read-only connection.
func (d *database) Count(ctx context.Context, table, where string) (int64, error) {
	q := "SELECT count(*) FROM " + quoteIdent(table)
	if strings.TrimSpace(where) != "" {
		if err := checkWhere(where); err != nil {
			return 0, err
		}
		q += " WHERE (" + where + ")"
	}
	res, err := d.readQuery(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("rows(%s.%s): %w", d.name, table, err)
	}
	n, _ := res.Rows[0][0].(int64)
	return n, nil
}

// Rows returns the newest limit rows of table, oldest first.
func (d *database) Rows(ctx context.Context, table string, limit int) (Result, error) {
	if limit <= 0 || limit > MaxRows {
		limit = MaxRows
	}
	q := fmt.Sprintf("SELECT * FROM (SELECT rowid AS _r, * FROM %s ORDER BY rowid DESC LIMIT %d) ORDER BY _r", quoteIdent(table), limit)
	res, err := d.readQuery(ctx, q)
	if err != nil {
		return res, err
	}
	// drop the helper column
	res.Columns = res.Columns[1:]
	for i := range res.Rows {
		res.Rows[i] = res.Rows[i][1:]
	}
	return res, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
