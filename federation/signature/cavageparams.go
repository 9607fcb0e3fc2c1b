package signature

import (
	"strings"
)

// cavageParams holds the parameters of a draft-cavage Signature header that
// matter to us. Unknown parameters are ignored, as the draft requires.
type cavageParams struct {
	keyID, algorithm, headers, signature, created, expires string
	hasAlgorithm, hasHeaders, hasCreated, hasExpires       bool
}

// parseCavageParams parses `name=value` pairs separated by commas, where a
// value is a token or a quoted-string with backslash escapes. Like
// Mastodon's grammar it allows whitespace around "=" and ",", and it
// tolerates the bogus "Signature " prefix old node-http-signature versions
// send. Parameter names are matched case-insensitively; a parameter that
// appears twice makes the header malformed rather than letting either
// copy win silently.
func parseCavageParams(s string) (cavageParams, error) {
	var p cavageParams
	s = strings.TrimSpace(s)
	if len(s) > len("signature ") && strings.EqualFold(s[:len("signature ")], "signature ") {
		// Only a prefix if what follows is not the "=" of a parameter
		// that happens to be called "signature".
		if rest := strings.TrimLeft(s[len("signature "):], " \t"); !strings.HasPrefix(rest, "=") {
			s = rest
		}
	}
	seen := 0
	i := 0
	for {
		i = skipOWS(s, i)
		if i >= len(s) {
			break
		}
		start := i
		for i < len(s) && isTchar(s[i]) {
			i++
		}
		if i == start {
			return p, errf(ReasonMalformed, "Signature: expected a parameter name at offset %d", start)
		}
		name := s[start:i]
		i = skipOWS(s, i)
		if i >= len(s) || s[i] != '=' {
			return p, errf(ReasonMalformed, "Signature: parameter %q has no value", name)
		}
		i = skipOWS(s, i+1)
		var val string
		if i < len(s) && s[i] == '"' {
			var err error
			val, i, err = readQuoted(s, i)
			if err != nil {
				return p, err
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			if i == start {
				return p, errf(ReasonMalformed, "Signature: parameter %q has an empty value", name)
			}
			val = s[start:i]
		}
		var bit int
		switch strings.ToLower(name) {
		case "keyid":
			bit, p.keyID = 1, val
		case "algorithm":
			bit, p.algorithm, p.hasAlgorithm = 2, val, true
		case "headers":
			bit, p.headers, p.hasHeaders = 4, val, true
		case "signature":
			bit, p.signature = 8, val
		case "created":
			bit, p.created, p.hasCreated = 16, val, true
		case "expires":
			bit, p.expires, p.hasExpires = 32, val, true
		}
		if seen&bit != 0 {
			return p, errf(ReasonMalformed, "Signature: parameter %q appears twice", name)
		}
		seen |= bit
		i = skipOWS(s, i)
		if i >= len(s) {
			break
		}
		if s[i] != ',' {
			return p, errf(ReasonMalformed, "Signature: expected ',' at offset %d", i)
		}
		i++
	}
	return p, nil
}

// readQuoted reads a quoted-string starting at s[i] == '"' and returns its
// unescaped content and the offset after the closing quote.
func readQuoted(s string, i int) (string, int, error) {
	i++ // opening quote
	start := i
	// Fast path: no escapes, the common case for keyId and signature.
	for i < len(s) && s[i] != '"' && s[i] != '\\' {
		i++
	}
	if i < len(s) && s[i] == '"' {
		return s[start:i], i + 1, nil
	}
	var b strings.Builder
	b.WriteString(s[start:i])
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", i, errf(ReasonMalformed, "Signature: unterminated escape")
			}
			b.WriteByte(s[i+1])
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", i, errf(ReasonMalformed, "Signature: unterminated quoted string")
}

// skipOWS skips spaces and tabs from offset i.
func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isTchar reports whether c is an RFC 9110 token character.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
