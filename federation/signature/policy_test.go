package signature

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These helpers sign a server-side request with an arbitrary component list
// and parameters, building the signing string independently of the code
// under test, so policy cases can express signatures Sign never makes.

func signWith(tb testing.TB, priv crypto.Signer, base string) []byte {
	tb.Helper()
	var sig []byte
	var err error
	if _, ok := priv.(*rsa.PrivateKey); ok {
		h := sha256.Sum256([]byte(base))
		sig, err = priv.Sign(rand.Reader, h[:], crypto.SHA256)
	} else {
		sig, err = priv.Sign(rand.Reader, []byte(base), crypto.Hash(0))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return sig
}

// cavageCustom signs r with draft-cavage over headers; params holds extra
// parameters (e.g. `algorithm="hs2019",created=1`) placed before headers.
func cavageCustom(tb testing.TB, r *http.Request, priv crypto.Signer, headers []string, params map[string]string, target string) {
	tb.Helper()
	var lines []string
	for _, h := range headers {
		var v string
		switch h {
		case "(request-target)":
			v = strings.ToLower(r.Method) + " " + target
		case "(created)", "(expires)":
			v = params[strings.Trim(h, "()")]
		case "host":
			v = r.Host
		default:
			v = r.Header.Get(h)
		}
		lines = append(lines, h+": "+v)
	}
	sig := signWith(tb, priv, strings.Join(lines, "\n"))
	hdr := `keyId="https://a.example/users/alice#main-key"`
	for _, k := range []string{"algorithm", "created", "expires"} {
		if v, ok := params[k]; ok {
			hdr += "," + k + "=" + v
		}
	}
	hdr += `,headers="` + strings.Join(headers, " ") + `",signature="` + base64.StdEncoding.EncodeToString(sig) + `"`
	r.Header.Set("Signature", hdr)
}

// rfcCustom signs r with RFC 9421 over components with the given
// parameter string (e.g. `;created=1;keyid="k"`), as label sig1.
func rfcCustom(tb testing.TB, r *http.Request, priv crypto.Signer, components []string, params, scheme string) {
	tb.Helper()
	var b strings.Builder
	var quoted []string
	for _, c := range components {
		var v string
		switch c {
		case "@method":
			v = r.Method
		case "@target-uri":
			v = scheme + "://" + r.Host + r.URL.RequestURI()
		case "@authority":
			v = r.Host
		case "@path":
			v = r.URL.EscapedPath()
		case "host":
			v = r.Host
		default:
			v = r.Header.Get(c)
		}
		b.WriteString(`"` + c + `": ` + v + "\n")
		quoted = append(quoted, `"`+c+`"`)
	}
	sp := "(" + strings.Join(quoted, " ") + ")" + params
	b.WriteString(`"@signature-params": ` + sp)
	sig := signWith(tb, priv, b.String())
	r.Header.Set("Signature-Input", "sig1="+sp)
	r.Header.Set("Signature", "sig1=:"+base64.StdEncoding.EncodeToString(sig)+":")
}

// serverRequest is an unsigned request as the server sees it, with Date,
// Digest and Content-Digest set for body.
func serverRequest(tb testing.TB, method, url, body string, date time.Time) (*http.Request, []byte) {
	tb.Helper()
	req := newClientRequest(tb, method, url, body)
	req.Header.Set("Date", date.UTC().Format(http.TimeFormat))
	if method == http.MethodPost {
		sum := sha256.Sum256([]byte(body))
		req.Header.Set("Digest", digestHeaderValue(&sum))
		req.Header.Set("Content-Digest", contentDigestValue(&sum))
	}
	r, b, err := fromWire(toWire(tb, req))
	if err != nil {
		tb.Fatal(err)
	}
	return r, b
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func TestCavagePolicy(t *testing.T) {
	rsaK := testRSA(t)
	post := []string{"(request-target)", "host", "date", "digest", "content-type"}
	const inbox = "https://b.example/users/bob/inbox"
	type tc struct {
		name    string
		method  string
		url     string
		date    time.Time
		headers []string
		params  map[string]string
		target  string                       // (request-target) path; default RequestURI
		mutate  func(*http.Request, *[]byte) // after signing
		priv    crypto.Signer
		pub     any
		want    Reason
	}
	tests := []tc{
		{name: "mastodon post", want: ""},
		{name: "rsa-sha256 label", params: map[string]string{"algorithm": "rsa-sha256"}},
		{name: "missing date", headers: []string{"(request-target)", "host", "digest"}, want: ReasonMissingComponent},
		{name: "missing digest on POST", headers: []string{"(request-target)", "host", "date"}, want: ReasonMissingComponent},
		{name: "missing host on GET", method: http.MethodGet, headers: []string{"(request-target)", "date", "accept"}, want: ReasonMissingComponent},
		{name: "GET with host", method: http.MethodGet, headers: []string{"(request-target)", "host", "date", "accept"}},
		{name: "GET without target or digest", method: http.MethodGet, headers: []string{"host", "date", "accept"}, want: ReasonMissingComponent},
		{name: "stale date 66 min", date: fixedNow.Add(-66 * time.Minute), want: ReasonDateWindow},
		{name: "old date 64 min", date: fixedNow.Add(-64 * time.Minute)},
		{name: "future date 61 min", date: fixedNow.Add(61 * time.Minute), want: ReasonDateWindow},
		{name: "future date 59 min", date: fixedNow.Add(59 * time.Minute)},
		{name: "expired expires", headers: []string{"(request-target)", "host", "(created)", "(expires)", "digest"},
			params: map[string]string{"algorithm": "hs2019", "created": unix(fixedNow.Add(-3 * time.Hour)), "expires": unix(fixedNow.Add(-61 * time.Minute))}, want: ReasonDateWindow},
		{name: "long expires honoured", headers: []string{"(request-target)", "host", "(created)", "(expires)", "digest"},
			params: map[string]string{"algorithm": "hs2019", "created": unix(fixedNow.Add(-3 * time.Hour)), "expires": unix(fixedNow.Add(time.Hour))}},
		{name: "expires capped at 12h", headers: []string{"(request-target)", "host", "(created)", "(expires)", "digest"},
			params: map[string]string{"algorithm": "hs2019", "created": unix(fixedNow.Add(-14 * time.Hour)), "expires": unix(fixedNow.Add(time.Hour))}, want: ReasonDateWindow},
		{name: "(created) with rsa-sha256", headers: []string{"(request-target)", "host", "(created)", "digest"},
			params: map[string]string{"algorithm": "rsa-sha256", "created": unix(fixedNow)}, want: ReasonMalformed},
		{name: "hs2019 default headers need created", headers: nil, params: map[string]string{}, mutate: func(r *http.Request, _ *[]byte) {
			r.Header.Set("Signature", `keyId="k",signature="AAAA"`)
		}, want: ReasonMalformed},
		{name: "query-less request-target accepted", url: inbox + "?a=1&b=2", target: "/users/bob/inbox"},
		{name: "query request-target accepted", url: inbox + "?a=1&b=2"},
		{name: "wrong query rejected", url: inbox + "?a=1&b=2", target: "/users/bob/inbox?a=1", want: ReasonBadSignature},
		{name: "lowercase digest token", mutate: func(r *http.Request, b *[]byte) {
			// Re-sign with a lowercase algorithm token in Digest.
			r.Header.Set("Digest", "sha-256="+strings.TrimPrefix(r.Header.Get("Digest"), "SHA-256="))
			cavageCustom(t, r, rsaK, post, nil, r.URL.RequestURI())
		}},
		{name: "digest mismatch", mutate: func(r *http.Request, b *[]byte) { (*b)[0] = '[' }, want: ReasonDigestMismatch},
		{name: "sha-512 digest only", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Digest", "SHA-512=abc")
			cavageCustom(t, r, rsaK, post, nil, r.URL.RequestURI())
		}, want: ReasonUnsupported},
		{name: "Signature prefix and spaces", mutate: func(r *http.Request, b *[]byte) {
			s := r.Header.Get("Signature")
			r.Header.Set("Signature", "Signature "+strings.NewReplacer(`",`, `" ,  `, `keyId="`, `keyId =	"`, `headers="`, `headers= "`).Replace(s))
		}},
		{name: "missing keyId", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), `keyId="https://a.example/users/alice#main-key",`, "", 1))
		}, want: ReasonMalformed},
		{name: "missing signature", mutate: func(r *http.Request, b *[]byte) {
			s := r.Header.Get("Signature")
			r.Header.Set("Signature", s[:strings.Index(s, ",signature=")])
		}, want: ReasonMalformed},
		{name: "unterminated quote", mutate: func(r *http.Request, b *[]byte) {
			s := r.Header.Get("Signature")
			r.Header.Set("Signature", s[:len(s)-1])
		}, want: ReasonMalformed},
		{name: "two Signature headers", mutate: func(r *http.Request, b *[]byte) { r.Header.Add("Signature", r.Header.Get("Signature")) }, want: ReasonMalformed},
		{name: "duplicate parameter", mutate: func(r *http.Request, b *[]byte) { r.Header.Set("Signature", r.Header.Get("Signature")+`,keyId="x"`) }, want: ReasonMalformed},
		{name: "unsupported algorithm", params: map[string]string{"algorithm": "hmac-sha256"}, want: ReasonUnsupported},
		{name: "rsa-sha256 label with ed25519 key", params: map[string]string{"algorithm": "rsa-sha256"}, priv: edKey, pub: edKey.Public(), want: ReasonBadSignature},
		{name: "ed25519 hs2019", priv: edKey, pub: edKey.Public()},
		{name: "bad signature", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), `signature="`, `signature="AAAA`, 1))
		}, want: ReasonBadSignature},
		{name: "too many headers", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), `headers="`, `headers="`+strings.Repeat("date ", 70), 1))
		}, want: ReasonMalformed},
		{name: "no signature", mutate: func(r *http.Request, b *[]byte) { r.Header.Del("Signature") }, want: ReasonNoSignature},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			if c.method == "" {
				c.method = http.MethodPost
			}
			if c.url == "" {
				c.url = inbox
			}
			if c.date.IsZero() {
				c.date = fixedNow
			}
			if c.headers == nil {
				c.headers = post
				if c.method == http.MethodGet {
					c.headers = []string{"(request-target)", "host", "date", "accept"}
				}
			}
			if c.priv == nil {
				c.priv, c.pub = rsaK, &rsaK.PublicKey
			}
			body := ""
			if c.method == http.MethodPost {
				body = testBody
			}
			r, b := serverRequest(t, c.method, c.url, body, c.date)
			if c.target == "" {
				c.target = r.URL.RequestURI()
			}
			cavageCustom(t, r, c.priv, c.headers, c.params, c.target)
			if c.mutate != nil {
				c.mutate(r, &b)
			}
			err := parseVerify(r, b, c.pub, httpsOpts)
			if got := ReasonOf(err); got != c.want {
				t.Fatalf("reason %q (%v), want %q", got, err, c.want)
			}
			if e, ok := err.(*Error); ok && e.Malformed() != (c.want == ReasonMalformed) {
				t.Fatalf("Malformed() = %v", e.Malformed())
			}
		})
	}
}

func TestRFC9421Policy(t *testing.T) {
	rsaK := testRSA(t)
	std := []string{"@method", "@target-uri", "content-digest"}
	created := ";created=" + unix(fixedNow)
	keyid := `;keyid="https://a.example/users/alice#main-key"`
	type tc struct {
		name       string
		method     string
		components []string
		params     string
		signScheme string
		priv       crypto.Signer
		pub        any
		mutate     func(*http.Request, *[]byte)
		want       Reason
	}
	tests := []tc{
		{name: "mastodon shape"},
		{name: "rsa alg", params: created + keyid + `;alg="rsa-v1_5-sha256"`},
		{name: "fedify shape", components: []string{"@method", "@target-uri", "@authority", "host", "date", "content-digest"}},
		{name: "ed25519", priv: edKey, pub: edKey.Public(), params: created + keyid + `;alg="ed25519"`},
		{name: "missing keyid", params: created, want: ReasonMalformed},
		{name: "missing created", params: keyid, want: ReasonMalformed},
		{name: "created not an integer", params: `;created="1"` + keyid, want: ReasonMalformed},
		{name: "missing @target-uri", components: []string{"@method", "content-digest"}, want: ReasonMissingComponent},
		{name: "missing @method", components: []string{"@target-uri", "content-digest"}, want: ReasonMissingComponent},
		{name: "missing content-digest on POST", components: []string{"@method", "@target-uri"}, want: ReasonMissingComponent},
		{name: "GET without content-digest", method: http.MethodGet, components: []string{"@method", "@target-uri"}},
		{name: "uppercase SHA-256 key", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Content-Digest", strings.Replace(r.Header.Get("Content-Digest"), "sha-256", "SHA-256", 1))
		}, want: ReasonMalformed},
		{name: "content-digest mismatch", mutate: func(r *http.Request, b *[]byte) { (*b)[1] = 'X' }, want: ReasonDigestMismatch},
		{name: "content-digest sha-512 only", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Content-Digest", "sha-512=:AAAA:")
			rfcCustom(t, r, rsaK, std, created+keyid, "https")
		}, want: ReasonUnsupported},
		{name: "wrong alg for RSA key", params: created + keyid + `;alg="ed25519"`, want: ReasonBadSignature},
		{name: "wrong alg for Ed25519 key", priv: edKey, pub: edKey.Public(), params: created + keyid + `;alg="rsa-v1_5-sha256"`, want: ReasonBadSignature},
		{name: "unsupported alg", params: created + keyid + `;alg="rsa-pss-sha512"`, want: ReasonUnsupported},
		{name: "expired expires", params: ";created=" + unix(fixedNow.Add(-3*time.Hour)) + ";expires=" + unix(fixedNow.Add(-61*time.Minute)) + keyid, want: ReasonDateWindow},
		{name: "expires honoured", params: ";created=" + unix(fixedNow.Add(-3*time.Hour)) + ";expires=" + unix(fixedNow.Add(time.Minute)) + keyid},
		{name: "stale created", params: ";created=" + unix(fixedNow.Add(-66*time.Minute)) + keyid, want: ReasonDateWindow},
		{name: "future created", params: ";created=" + unix(fixedNow.Add(61*time.Minute)) + keyid, want: ReasonDateWindow},
		{name: "http target-uri", signScheme: "http", want: ReasonBadSignature},
		{name: "unparseable Signature-Input", mutate: func(r *http.Request, b *[]byte) { r.Header.Set("Signature-Input", "sig1=(") }, want: ReasonMalformed},
		{name: "Signature missing", mutate: func(r *http.Request, b *[]byte) { r.Header.Del("Signature") }, want: ReasonMalformed},
		{name: "Signature not bytes", mutate: func(r *http.Request, b *[]byte) { r.Header.Set("Signature", `sig1="abc"`) }, want: ReasonMalformed},
		{name: "duplicate component", components: []string{"@method", "@target-uri", "content-digest", "@method"}, want: ReasonMalformed},
		{name: "uppercase field name", components: []string{"@method", "@target-uri", "content-digest", "Date"}, want: ReasonMalformed},
		{name: "too many components", components: manyFields(70), want: ReasonMalformed},
		{name: "covered header absent", components: []string{"@method", "@target-uri", "content-digest", "x-absent"}, want: ReasonMissingComponent},
		{name: "first label wins", mutate: func(r *http.Request, b *[]byte) {
			r.Header.Set("Signature-Input", r.Header.Get("Signature-Input")+`, sig2=("@method");created=1;keyid="x"`)
			r.Header.Set("Signature", r.Header.Get("Signature")+`, sig2=:AAAA:`)
		}},
		{name: "bad signature", mutate: func(r *http.Request, b *[]byte) { r.Header.Set("Signature", "sig1=:AAAA:") }, want: ReasonBadSignature},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			if c.method == "" {
				c.method = http.MethodPost
			}
			if c.components == nil {
				c.components = std
			}
			if c.params == "" {
				c.params = created + keyid
			}
			if c.signScheme == "" {
				c.signScheme = "https"
			}
			if c.priv == nil {
				c.priv, c.pub = rsaK, &rsaK.PublicKey
			}
			body := ""
			if c.method == http.MethodPost {
				body = testBody
			}
			r, b := serverRequest(t, c.method, "https://b.example/users/bob/inbox?x=1", body, fixedNow)
			rfcCustom(t, r, c.priv, c.components, c.params, c.signScheme)
			if c.mutate != nil {
				c.mutate(r, &b)
			}
			err := parseVerify(r, b, c.pub, httpsOpts)
			if got := ReasonOf(err); got != c.want {
				t.Fatalf("reason %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

func TestSameKey(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://a.example/users/alice#main-key", "https://a.example/users/alice", true},
		{"https://a.example/users/alice#main-key", "https://a.example/users/alice#other", true},
		{"https://a.example/users/alice", "https://a.example/users/alicia", false},
		{"https://a.example/users/alice#x", "https://b.example/users/alice#x", false},
	}
	for _, tc := range tests {
		if got := SameKey(tc.a, tc.b); got != tc.want {
			t.Errorf("SameKey(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestReasonOf(t *testing.T) {
	if ReasonOf(nil) != "" || ReasonOf(http.ErrBodyNotAllowed) != ReasonOther {
		t.Fatal("ReasonOf of nil or a foreign error")
	}
	if ReasonOf(errf(ReasonDateWindow, "x")) != ReasonDateWindow {
		t.Fatal("ReasonOf(*Error)")
	}
	for _, r := range Reasons() {
		if r == "" || strings.ToLower(string(r)) != string(r) || strings.ContainsAny(string(r), " -") {
			t.Errorf("reason %q is not a tidy label value", r)
		}
	}
}

func TestKeyIDOf(t *testing.T) {
	k := testKeys(t)[0].key
	for _, scheme := range []Scheme{Cavage, RFC9421} {
		// A stale request: Parse fails, the key id is still readable.
		req := newClientRequest(t, http.MethodPost, "https://b.example/inbox", testBody)
		if err := Sign(req, []byte(testBody), k, scheme, fixedNow.Add(-3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(req, []byte(testBody), httpsOpts); ReasonOf(err) != ReasonDateWindow {
			t.Fatalf("%s: %v", scheme, err)
		}
		if got := KeyIDOf(req); got != k.ID {
			t.Errorf("%s: KeyIDOf = %q", scheme, got)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, "https://b.example/", nil)
	if KeyIDOf(r) != "" {
		t.Fatal("unsigned request has a key id")
	}
	r.Header.Set("Signature-Input", "sig1=(")
	if KeyIDOf(r) != "" {
		t.Fatal("unparseable Signature-Input has a key id")
	}
}

// manyFields covers the standard components plus n distinct headers.
func manyFields(n int) []string {
	c := []string{"@method", "@target-uri", "content-digest"}
	for i := range n {
		c = append(c, "x-h"+strconv.Itoa(i))
	}
	return c
}
