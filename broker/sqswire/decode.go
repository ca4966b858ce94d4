package sqswire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Both protocols decode into one input: the JSON protocol's field names,
// which the query protocol's flattened names are mapped onto.

// input is every parameter of every action mqlab answers.
type input struct {
	QueueName       string
	QueueUrl        string //nolint:revive // SQS's own spelling
	QueueNamePrefix string
	MaxResults      *flexInt
	NextToken       string

	Attributes     map[string]string
	Tags           map[string]string
	AttributeNames []string

	MessageSystemAttributeNames []string
	MessageAttributeNames       []string
	MaxNumberOfMessages         *flexInt
	VisibilityTimeout           *flexInt
	WaitTimeSeconds             *flexInt
	ReceiveRequestAttemptId     string //nolint:revive

	entry
	Entries []entry

	SourceArn                    string
	DestinationArn               string
	MaxNumberOfMessagesPerSecond *flexInt
	QueueOwnerAWSAccountId       string //nolint:revive
}

// entry is one message of a send, or one receipt of a delete or a
// visibility change; a single send or delete is an entry without an Id.
type entry struct {
	Id                      string //nolint:revive
	MessageBody             *string
	DelaySeconds            *flexInt
	MessageAttributes       map[string]msgAttr
	MessageSystemAttributes map[string]msgAttr
	MessageDeduplicationId  string //nolint:revive
	MessageGroupId          string
	ReceiptHandle           string
	VisibilityTimeout       *flexInt
}

// msgAttr is one message attribute: a typed string or binary value.
type msgAttr struct {
	DataType         string
	StringValue      *string  `json:",omitempty"`
	BinaryValue      []byte   `json:",omitempty"`
	StringListValues []string `json:",omitempty"`
	BinaryListValues [][]byte `json:",omitempty"`
}

// flexInt is a number the JSON protocol sends as a number and the query
// protocol as a string.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not a whole number", b)
	}
	*f = flexInt(n)
	return nil
}

func decodeJSON(body []byte) (*input, error) {
	var in input
	if len(bytes.TrimSpace(body)) == 0 {
		return &in, nil
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, newErr(400, "SerializationException", "MalformedQueryString", "The request body is not the JSON this action takes: %v", err)
	}
	return &in, nil
}

// maxListIndex bounds the N of a query parameter such as Attribute.N.Name.
const maxListIndex = 1000

// decodeQuery reads a query protocol request's form values.
func decodeQuery(form url.Values) (*input, error) {
	root := map[string]any{}
	for key, vals := range form {
		if key == "Action" || key == "Version" || len(vals) == 0 {
			continue
		}
		if len(key) > 512 {
			return nil, errInvalid("A parameter name of %d characters is too long.", len(key))
		}
		parts := strings.Split(key, ".")
		node := root
		for i, p := range parts {
			if p == "" {
				return nil, errInvalid("The parameter name %q has an empty part.", key)
			}
			if i == len(parts)-1 {
				if _, taken := node[p]; taken {
					return nil, errInvalid("The parameter %q is both a value and a group.", key)
				}
				node[p] = vals[0]
				break
			}
			next, ok := node[p].(map[string]any)
			if !ok {
				if _, taken := node[p]; taken {
					return nil, errInvalid("The parameter %q is both a value and a group.", key)
				}
				next = map[string]any{}
				node[p] = next
			}
			node = next
		}
	}
	shaped, err := shapeQuery(root)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(shaped)
	if err != nil {
		return nil, errInvalid("The parameters do not fit together: %v", err)
	}
	var in input
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, errInvalid("The parameters do not fit together: %v", err)
	}
	return &in, nil
}

// listOf reads the members of a flattened list (Name.1, Name.2, …), in
// the order of their numbers.
func listOf(name string, v any) ([]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errInvalid("The parameter %s needs a number: %s.1, %s.2, …", name, name, name)
	}
	type item struct {
		n int
		v any
	}
	items := make([]item, 0, len(m))
	for k, x := range m {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > maxListIndex {
			return nil, errInvalid("The parameter %s.%s: the part after %s must be a number from 1 to %d.", name, k, name, maxListIndex)
		}
		items = append(items, item{n, x})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].n < items[j].n })
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	return out, nil
}

// pairs reads a flattened map (Attribute.1.Name, Attribute.1.Value, …).
func pairs(name string, v any, key, val string, shape bool) (map[string]any, error) {
	items, err := listOf(name, v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errInvalid("Each %s needs a %s and a %s.", name, key, val)
		}
		k, ok := m[key].(string)
		if !ok {
			return nil, errInvalid("A %s has no %s.", name, key)
		}
		x := m[val]
		if shape {
			if x, err = shapeQuery(x); err != nil {
				return nil, err
			}
		}
		out[k] = x
	}
	return out, nil
}

// shapeQuery renames the query protocol's flattened lists and maps to the
// JSON protocol's fields.
func shapeQuery(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	out := map[string]any{}
	var err error
	for k, x := range m {
		switch {
		case k == "Attribute":
			out["Attributes"], err = pairs(k, x, "Name", "Value", false)
		case k == "Tag":
			out["Tags"], err = pairs(k, x, "Key", "Value", false)
		case k == "MessageAttribute" || k == "MessageSystemAttribute":
			out[k+"s"], err = pairs(k, x, "Name", "Value", true)
		case k == "AttributeName" || k == "MessageAttributeName" || k == "MessageSystemAttributeName":
			out[k+"s"], err = listOf(k, x)
		case strings.HasSuffix(k, "RequestEntry"):
			var items []any
			if items, err = listOf(k, x); err == nil {
				for i := range items {
					if items[i], err = shapeQuery(items[i]); err != nil {
						break
					}
				}
				out["Entries"] = items
			}
		case k == "StringListValue" || k == "BinaryListValue":
			out[k+"s"], err = listOf(k, x)
		default:
			out[k], err = shapeQuery(x)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
