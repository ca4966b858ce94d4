package services

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// fields reads a message value as named fields: a JSON object
// ({"order_id":881,"user_id":42}) or key=value words ("order=881 user=42");
// other words are ignored, so "order 881 placed" is a valid value with no
// fields. Names are folded: order_id → order, user_id → user.
type fields map[string]string

func parseFields(v string) fields {
	f := fields{}
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) == nil {
			for k, x := range m {
				switch y := x.(type) {
				case string:
					f[foldName(k)] = y
				case float64:
					f[foldName(k)] = strconv.FormatFloat(y, 'f', -1, 64)
				default:
					f[foldName(k)] = fmt.Sprint(y)
				}
			}
			return f
		}
	}
	for _, w := range strings.Fields(v) {
		if k, x, ok := strings.Cut(w, "="); ok && k != "" {
			f[foldName(k)] = strings.Trim(x, `"'`)
		}
	}
	return f
}

func foldName(k string) string {
	k = strings.ToLower(k)
	return strings.TrimSuffix(k, "_id")
}

// num returns field name as an integer: def when absent, an error when it is
// there but not a whole number.
func (f fields) num(name string, def int64) (int64, error) {
	s, ok := f[name]
	if !ok || s == "" {
		return def, nil
	}
	s = strings.TrimPrefix(s, "₹")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a whole number", ErrBadMessage, name, s)
	}
	return n, nil
}

func (f fields) has(name string) bool { _, ok := f[name]; return ok }

// keyInt reads a message key as a number (order 881), or def when it is not one.
func keyInt(key string, def int64) int64 {
	if n, err := strconv.ParseInt(strings.TrimSpace(key), 10, 64); err == nil {
		return n
	}
	return def
}
