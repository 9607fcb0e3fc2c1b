package fedtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OpenAPI is an OpenAPI 3.1 document that tests hold answers against: which
// operations it names, and whether a JSON value matches one of its schemas.
// It checks the subset of JSON Schema Herald's document uses ($ref, type,
// properties, required, additionalProperties false, items, enum, const,
// minimum and maximum, and the formats date-time and uri), and fails on any
// keyword it does not know, so the document cannot say more than is checked.
type OpenAPI struct {
	Doc map[string]any
}

// ParseOpenAPI parses a document.
func ParseOpenAPI(b []byte) (*OpenAPI, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc["openapi"] != "3.1.0" {
		return nil, fmt.Errorf("openapi is %v, want 3.1.0", doc["openapi"])
	}
	return &OpenAPI{Doc: doc}, nil
}

// Operations lists "METHOD path" for every operation under paths, sorted.
func (o *OpenAPI) Operations() []string {
	var out []string
	paths, _ := o.Doc["paths"].(map[string]any)
	for p, item := range paths {
		for m := range item.(map[string]any) {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(out)
	return out
}

// Response returns the documented answer of an operation for status (or
// its nXX range), resolved, and whether there is one.
func (o *OpenAPI) Response(method, path string, status int) (map[string]any, bool) {
	item, _ := o.Doc["paths"].(map[string]any)[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	responses, _ := op["responses"].(map[string]any)
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX"} {
		if r, ok := responses[key].(map[string]any); ok {
			return o.resolve(r), true
		}
	}
	return nil, false
}

// Check reports whether v (a decoded JSON value) matches schema.
func (o *OpenAPI) Check(schema any, v any) error { return o.check(schema, v, "$") }

// JSONSchema returns the application/json schema of a response or a
// request body, or nil.
func JSONSchema(r map[string]any) any {
	content, _ := r["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	return media["schema"]
}

// Webhook returns the request body of a webhook event documented under
// webhooks, or nil.
func (o *OpenAPI) Webhook(event string) map[string]any {
	item, _ := o.Doc["webhooks"].(map[string]any)[event].(map[string]any)
	post, _ := item["post"].(map[string]any)
	body, _ := post["requestBody"].(map[string]any)
	return body
}

// resolve follows a $ref within the document.
func (o *OpenAPI) resolve(m map[string]any) map[string]any {
	for {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = o.Doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur, _ = cur.(map[string]any)[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			panic("unresolvable $ref " + ref)
		}
		m = next
	}
}

var knownKeywords = []string{"$ref", "type", "properties", "required", "additionalProperties", "items", "enum", "const",
	"format", "minimum", "maximum", "description"}

func (o *OpenAPI) check(schema any, v any, at string) error {
	s := o.resolve(schema.(map[string]any))
	for k := range s {
		if !slices.Contains(knownKeywords, k) {
			return fmt.Errorf("%s: the schema uses %q, which this check does not know", at, k)
		}
	}
	if t, ok := s["type"].(string); ok {
		if err := checkType(t, v); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	if c, ok := s["const"]; ok && c != v {
		return fmt.Errorf("%s: %v, want %v", at, v, c)
	}
	if n, ok := v.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && n < m {
			return fmt.Errorf("%s: %v below %v", at, n, m)
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			return fmt.Errorf("%s: %v above %v", at, n, m)
		}
	}
	if str, ok := v.(string); ok {
		switch s["format"] {
		case "date-time":
			if _, err := time.Parse(time.RFC3339, str); err != nil {
				return fmt.Errorf("%s: %q is not a date-time", at, str)
			}
		case "uri":
			if u, err := url.Parse(str); err != nil || !u.IsAbs() {
				return fmt.Errorf("%s: %q is not an absolute URI", at, str)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: %q is required", at, r)
			}
		}
		for k, val := range obj {
			ps, ok := props[k]
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: %q is not documented", at, k)
				}
				continue
			}
			if err := o.check(ps, val, at+"."+k); err != nil {
				return err
			}
		}
	}
	if arr, ok := v.([]any); ok && s["items"] != nil {
		for i, it := range arr {
			if err := o.check(s["items"], it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

var integral = regexp.MustCompile(`^-?\d+$`)

func checkType(t string, v any) error {
	ok := false
	switch t {
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(float64)
	case "integer":
		n, isNum := v.(float64)
		ok = isNum && integral.MatchString(strconv.FormatFloat(n, 'f', -1, 64))
	case "null":
		ok = v == nil
	}
	if !ok {
		return fmt.Errorf("%v is not of type %s", v, t)
	}
	return nil
}

func asStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }
