package mastoapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Params are a request's parameters, read alike from its query string,
// a form body (urlencoded or multipart) and a JSON body, and merged as
// Rails merges them for Mastodon: the body's win over the query's. Apps
// differ in what they send (Tusky forms, Elk and masto.js JSON, some
// register apps with query parameters, some send "{}" to follow), so no
// handler reads r.Form or decodes a body itself.
//
// Keys are kept in Rails' bracket form: a JSON body is flattened into
// it, so {"fields_attributes": [{"name": "a"}]}, the form field
// fields_attributes[0][name]=a and the query fields_attributes[][name]=a
// all read the same, and so do {"types": ["x"]} and types[]=x.
type Params struct {
	values url.Values
	files  map[string]*multipart.FileHeader
}

// maxMultipartMemory is how much of a multipart body is held in memory;
// the rest of a file goes to a temporary file.
const maxMultipartMemory = 1 << 20

// readParams reads r's parameters. A body that is not what its
// Content-Type says is a 400; an unknown Content-Type leaves the body
// unread (its parameters are the query's).
func readParams(r *http.Request) (*Params, error) {
	p := &Params{values: url.Values{}, files: map[string]*multipart.FileHeader{}}
	for k, vs := range r.URL.Query() {
		p.values[k] = vs
	}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return p, nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, bodyError(err)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return p, nil
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, &Error{Status: http.StatusBadRequest, Msg: "the JSON body does not parse: " + err.Error()}
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, &Error{Status: http.StatusBadRequest, Msg: "the JSON body must be an object"}
		}
		vals := url.Values{}
		flatten(vals, "", obj)
		p.merge(vals)
	case mt == "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, bodyError(err)
		}
		p.merge(r.PostForm)
	case mt == "multipart/form-data":
		if err := r.ParseMultipartForm(maxMultipartMemory); err != nil {
			return nil, bodyError(err)
		}
		p.merge(r.MultipartForm.Value)
		for k, fs := range r.MultipartForm.File {
			if len(fs) > 0 {
				p.files[k] = fs[0]
			}
		}
	}
	return p, nil
}

func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Msg: "the request body is too large"}
	}
	return &Error{Status: http.StatusBadRequest, Msg: "the request body could not be read: " + err.Error()}
}

// merge puts the body's values over the query's.
func (p *Params) merge(body url.Values) {
	for k, vs := range body {
		p.values[k] = vs
	}
}

// flatten writes a decoded JSON value under key in Rails' bracket form.
func flatten(out url.Values, key string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if key != "" {
				k = key + "[" + k + "]"
			}
			flatten(out, k, e)
		}
	case []any:
		for i, e := range t {
			switch e.(type) {
			case map[string]any, []any:
				flatten(out, fmt.Sprintf("%s[%d]", key, i), e)
			default:
				flatten(out, key+"[]", e)
			}
		}
		if len(t) == 0 {
			out[key+"[]"] = append(out[key+"[]"], []string{}...)
		}
	case nil:
		out.Add(key, "")
	case bool:
		out.Add(key, strconv.FormatBool(t))
	case json.Number:
		out.Add(key, t.String())
	case string:
		out.Add(key, t)
	}
}

// Get is the parameter's value, "" when absent.
func (p *Params) Get(name string) string {
	if vs := p.values[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// Has reports whether the parameter was sent (even empty).
func (p *Params) Has(name string) bool {
	_, ok := p.values[name]
	return ok
}

// List is a list parameter: name[]=a&name[]=b, a JSON array, or name
// given once or more.
func (p *Params) List(name string) []string {
	if vs, ok := p.values[name+"[]"]; ok {
		return vs
	}
	if vs, ok := p.values[name]; ok {
		return vs
	}
	var out []string
	for _, k := range p.indexes(name) {
		out = append(out, p.values[name+"["+k+"]"]...)
	}
	return out
}

// HasList reports whether a list parameter was sent, even empty.
func (p *Params) HasList(name string) bool {
	_, a := p.values[name+"[]"]
	_, b := p.values[name]
	return a || b || len(p.indexes(name)) > 0
}

// Bool reads a boolean the way Rails does (ActiveModel::Type::Boolean):
// false, 0, f, off (any case) are false, anything else true, and an
// absent or empty parameter is not set.
func (p *Params) Bool(name string) (value, set bool) {
	v := p.Get(name)
	if v == "" {
		return false, false
	}
	switch strings.ToLower(v) {
	case "false", "0", "f", "off":
		return false, true
	}
	return true, true
}

// Int reads a whole number; def when absent, an error when malformed.
func (p *Params) Int(name string, def int) (int, error) {
	v := p.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("%s must be a whole number", name)}
	}
	return n, nil
}

// Records reads a list of objects such as fields_attributes: from
// name[0][key] (form, or a JSON array of objects), name[key0][key]
// (Rails' hash-of-hashes form, ordered by the outer key as a number),
// or name[][key] (each object's keys in turn). Each object is a map of
// its keys' values.
func (p *Params) Records(name string) []map[string]string {
	var out []map[string]string
	for _, idx := range p.indexes(name) {
		prefix := name + "[" + idx + "]["
		rec := map[string]string{}
		for k, vs := range p.values {
			if sub, ok := strings.CutPrefix(k, prefix); ok && strings.HasSuffix(sub, "]") && len(vs) > 0 {
				rec[strings.TrimSuffix(sub, "]")] = vs[0]
			}
		}
		if len(rec) > 0 {
			out = append(out, rec)
		}
	}
	// name[][key]: the nth value of each key makes the nth object.
	prefix := name + "[]["
	for k, vs := range p.values {
		sub, ok := strings.CutPrefix(k, prefix)
		if !ok || !strings.HasSuffix(sub, "]") {
			continue
		}
		for len(out) < len(vs) {
			out = append(out, map[string]string{})
		}
		for i, v := range vs {
			out[i][strings.TrimSuffix(sub, "]")] = v
		}
	}
	return out
}

// indexes are the distinct X of the keys name[X]... (X not empty), in
// numeric order where they are numbers.
func (p *Params) indexes(name string) []string {
	seen := map[string]bool{}
	for k := range p.values {
		rest, ok := strings.CutPrefix(k, name+"[")
		if !ok {
			continue
		}
		idx, _, ok := strings.Cut(rest, "]")
		if ok && idx != "" {
			seen[idx] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, errA := strconv.Atoi(out[i])
		b, errB := strconv.Atoi(out[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

// File is an uploaded file of a multipart body, nil when none.
func (p *Params) File(name string) *multipart.FileHeader { return p.files[name] }
