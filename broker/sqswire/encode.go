package sqswire

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"sort"
	"strconv"
)

// An answer is built once as an ordered tree and written in either
// protocol's shape: JSON objects, or XML elements whose lists and maps are
// flattened into repeated elements as the query protocol has them.

// obj is an object whose fields keep their order.
type obj []kv

type kv struct {
	k string
	v any
}

// list is a JSON array; in XML each item is an element named item.
type list struct {
	item  string
	items []any
}

// attrMap is a JSON object; in XML each pair is an element named item
// holding a Name and a Value.
type attrMap struct {
	item string
	m    map[string]any
}

func writeJSON(buf *bytes.Buffer, v any) {
	switch x := v.(type) {
	case obj:
		buf.WriteByte('{')
		for i, f := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, f.k)
			buf.WriteByte(':')
			writeJSON(buf, f.v)
		}
		buf.WriteByte('}')
	case list:
		buf.WriteByte('[')
		for i, it := range x.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSON(buf, it)
		}
		buf.WriteByte(']')
	case attrMap:
		buf.WriteByte('{')
		for i, k := range sortedKeys(x.m) {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k)
			buf.WriteByte(':')
			writeJSON(buf, x.m[k])
		}
		buf.WriteByte('}')
	case string:
		writeJSONString(buf, x)
	case []byte:
		writeJSONString(buf, base64.StdEncoding.EncodeToString(x))
	case int:
		buf.WriteString(strconv.Itoa(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	default:
		buf.WriteString("null")
	}
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeXML(buf *bytes.Buffer, name string, v any) {
	switch x := v.(type) {
	case obj:
		open(buf, name)
		for _, f := range x {
			writeXML(buf, f.k, f.v)
		}
		closeTag(buf, name)
	case list:
		for _, it := range x.items {
			writeXML(buf, x.item, it)
		}
	case attrMap:
		for _, k := range sortedKeys(x.m) {
			writeXML(buf, x.item, obj{{"Name", k}, {"Value", x.m[k]}})
		}
	case []byte:
		writeXML(buf, name, base64.StdEncoding.EncodeToString(x))
	case string:
		open(buf, name)
		xml.EscapeText(buf, []byte(x))
		closeTag(buf, name)
	case int:
		writeXML(buf, name, strconv.Itoa(x))
	case int64:
		writeXML(buf, name, strconv.FormatInt(x, 10))
	case bool:
		writeXML(buf, name, strconv.FormatBool(x))
	}
}

func open(buf *bytes.Buffer, name string) {
	buf.WriteByte('<')
	buf.WriteString(name)
	buf.WriteByte('>')
}

func closeTag(buf *bytes.Buffer, name string) {
	buf.WriteString("</")
	buf.WriteString(name)
	buf.WriteByte('>')
}

// md5Hex is the hex MD5 of a message body, as SQS answers it.
func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// attributesMD5 is SQS's MD5 of message attributes: for each attribute in
// name order, its name, its data type and its value, each preceded by its
// length as four big-endian bytes, with a transport byte (1 string, 2
// binary) before the value. Clients compute the same and compare.
func attributesMD5(attrs map[string]msgAttr) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	h := md5.New()
	var n [4]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, name := range names {
		a := attrs[name]
		put([]byte(name))
		put([]byte(a.DataType))
		if a.BinaryValue != nil {
			h.Write([]byte{2})
			put(a.BinaryValue)
		} else {
			h.Write([]byte{1})
			s := ""
			if a.StringValue != nil {
				s = *a.StringValue
			}
			put([]byte(s))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
