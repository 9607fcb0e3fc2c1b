package federation

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/piprate/json-gold/ld"

	"herald/federation/as"
)

// JSON-LD policy. Almost every server sends compacted ActivityStreams whose
// @context is, or includes, the AS2 context URL; those documents already use
// the plain keys Herald reads ("inbox", "publicKey"), so they are read as
// plain JSON, exactly as Mastodon reads them, and extension context URLs
// they also list (Fedify's data-integrity, DID and multikey contexts) are
// never loaded. Only a document that does not use the AS2 context, or that
// spells AS2/security terms as prefixed or absolute IRIs ("as:inbox",
// "@type"), is normalised with json-gold: expanded, then compacted against
// the AS2 + security/v1 context, giving the same plain keys.
//
// Contexts are never fetched. The loader holds embedded copies of the two
// contexts (federation/contexts/*.jsonld) and fails on any other URL, so a
// hostile document cannot make Herald issue requests (SSRF) or wait on a
// slow host. The texts are those served at the context URLs, as embedded in
// bashrc2/epicyon (context.py: get_activitystreams_schema,
// get_v1security_schema); the AS2 one matches w3c/activitystreams'
// ns/activitystreams.jsonld plus the later additions (https "as" prefix,
// sharedInbox, Public, likes, shares, alsoKnownAs, ...).

// Context URLs Herald knows.
const (
	ASContext       = "https://www.w3.org/ns/activitystreams"
	SecurityContext = "https://w3id.org/security/v1"
)

// ErrUnsupportedContext is returned for a document whose @context Herald
// cannot interpret without fetching something.
var ErrUnsupportedContext = errors.New("unsupported JSON-LD context")

//go:embed contexts/*.jsonld
var contextFiles embed.FS

// memLoader is a json-gold DocumentLoader over preloaded documents. It is
// read-only after init, so it is safe for concurrent use.
type memLoader map[string]any

// LoadDocument returns a preloaded context, or fails: nothing is fetched.
func (m memLoader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	d, ok := m[u]
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a known context", ErrUnsupportedContext, u)
	}
	return &ld.RemoteDocument{DocumentURL: u, Document: d}, nil
}

var (
	ldOnce   sync.Once
	ldErr    error
	loader   memLoader
	ldTarget *ld.Context // AS2 + security/v1, parsed once
	// ldMu serialises compaction: the parsed target context builds its
	// inverse lazily and json-gold does not document it as safe to share.
	// Normalisation is the rare path, so a lock costs nothing in practice.
	ldMu sync.Mutex
)

func initLD() {
	ldOnce.Do(func() {
		loader = memLoader{}
		for file, urls := range map[string][]string{
			"contexts/activitystreams.jsonld": {ASContext, "http://www.w3.org/ns/activitystreams", ASContext + ".jsonld"},
			"contexts/security-v1.jsonld":     {SecurityContext, "http://w3id.org/security/v1"},
		} {
			b, err := contextFiles.ReadFile(file)
			if err != nil {
				ldErr = err
				return
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				ldErr = fmt.Errorf("%s: %w", file, err)
				return
			}
			for _, u := range urls {
				loader[u] = doc
			}
		}
		ldTarget, ldErr = ld.NewContext(nil, ldOptions()).Parse([]any{ASContext, SecurityContext})
		if ldErr == nil {
			// Build the inverse context now, under no contention.
			ldTarget.GetInverse()
		}
	})
}

func ldOptions() *ld.JsonLdOptions {
	o := ld.NewJsonLdOptions("")
	o.DocumentLoader = loader
	return o
}

// ParseDocument decodes an ActivityStreams document (a JSON object) and
// returns it with plain AS2 keys, normalising it with JSON-LD only when it
// needs it (see the policy above). It never performs network I/O.
func ParseDocument(body []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if doc == nil {
		return nil, errors.New("not a JSON object")
	}
	if _, ok := doc["@context"]; !ok {
		return nil, fmt.Errorf("%w: no @context", ErrUnsupportedContext)
	}
	if !hasASContext(doc["@context"]) {
		return Normalize(doc)
	}
	if !needsExpansion(doc, 0) {
		return doc, nil
	}
	norm, err := Normalize(doc)
	if errors.Is(err, ErrUnsupportedContext) {
		// An AS2 document that also names a context Herald does not hold
		// (Fedify embeds actors with https://w3id.org/identity/v1): read
		// it as plain JSON, as Mastodon does, rather than refuse it. The
		// terms Herald reads are in their compact AS2 form anyway.
		return doc, nil
	}
	return norm, err
}

// Compact is ParseDocument for an activity read already as plain JSON
// (as.Parse, as the inbox reads a body before it knows the sender): o
// itself when it is compact ActivityStreams, otherwise what JSON-LD
// normalisation makes of it, by the same rules. body is what o was
// parsed from; doc is the document's JSON as read: body, or the
// normalised document's. It never performs network I/O.
func Compact(o *as.Object, body []byte) (compact *as.Object, doc []byte, err error) {
	if o.JSONLDContext == nil {
		return nil, nil, fmt.Errorf("%w: no @context", ErrUnsupportedContext)
	}
	var ctx any
	json.Unmarshal(o.JSONLDContext, &ctx)
	asContext := hasASContext(ctx)
	if asContext && !needsExpansionJSON(body) {
		return o, body, nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	norm, err := Normalize(m)
	if asContext && errors.Is(err, ErrUnsupportedContext) {
		return o, body, nil // as ParseDocument: read as plain JSON
	}
	if err != nil {
		return nil, nil, err
	}
	if doc, err = json.Marshal(norm); err != nil {
		return nil, nil, err
	}
	compact, err = as.Parse(doc)
	return compact, doc, err
}

// needsExpansionJSON is needsExpansion of a JSON text, read without
// decoding it: the same keys at the same depths.
func needsExpansionJSON(b []byte) bool {
	found := false
	as.EachKey(b, func(k string, depth int) bool {
		switch {
		case found || depth > 32 || k == "@context":
			return false
		case strings.HasPrefix(k, "@") || nonCompactKey(k):
			found = true
			return false
		}
		return true
	})
	return found
}

// hasASContext reports whether @context is the AS2 URL or a list containing
// it: Mastodon's supported_context? test.
func hasASContext(ctx any) bool {
	switch c := ctx.(type) {
	case string:
		return c == ASContext
	case []any:
		for _, e := range c {
			if s, ok := e.(string); ok && s == ASContext {
				return true
			}
		}
	}
	return false
}

// needsExpansion reports whether a document that does use the AS2 context
// still spells terms Herald reads in a non-compact form: JSON-LD keywords
// other than @context, or AS2/security/LDP terms as prefixed or absolute
// IRIs. Other extension keys ("toot:..."), which Herald ignores, do not
// trigger normalisation.
func needsExpansion(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "@context" {
				continue
			}
			if strings.HasPrefix(k, "@") || nonCompactKey(k) {
				return true
			}
			if needsExpansion(e, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if needsExpansion(e, depth+1) {
				return true
			}
		}
	}
	return false
}

func nonCompactKey(k string) bool {
	for _, p := range []string{"as:", "sec:", "ldp:",
		"https://www.w3.org/ns/activitystreams#", "http://www.w3.org/ns/activitystreams#",
		"https://w3id.org/security#", "http://www.w3.org/ns/ldp#"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Normalize expands doc with the embedded contexts and compacts it against
// AS2 + security/v1, so its keys are the plain ones ("inbox", "publicKey").
// An unknown context URL is ErrUnsupportedContext; nothing is fetched. The
// result's @context is the target context.
func Normalize(doc map[string]any) (map[string]any, error) {
	initLD()
	if ldErr != nil {
		return nil, fmt.Errorf("json-ld setup: %w", ldErr)
	}
	expanded, err := ld.NewJsonLdProcessor().Expand(doc, ldOptions())
	if err != nil {
		if errors.Is(err, ErrUnsupportedContext) {
			return nil, fmt.Errorf("json-ld expand: %w", err)
		}
		if strings.Contains(err.Error(), "not a known context") {
			// json-gold flattened our loader's error into a string.
			return nil, fmt.Errorf("%w: %v", ErrUnsupportedContext, err)
		}
		return nil, fmt.Errorf("json-ld expand: %w", err)
	}
	if len(expanded) != 1 {
		return nil, fmt.Errorf("json-ld: document has %d top-level nodes, want 1", len(expanded))
	}
	ldMu.Lock()
	out, err := ld.NewJsonLdApi().Compact(ldTarget, "", expanded[0], true)
	ldMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("json-ld compact: %w", err)
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("json-ld: compacted to %T", out)
	}
	m["@context"] = []any{ASContext, SecurityContext}
	return m, nil
}
