package signature

import (
	"net/http"
	"testing"
)

// The fuzz targets feed arbitrary header values to both parsers. Beyond not
// panicking, a successful Parse must yield a keyId and a Verify that does
// not panic either.

func fuzzRequest(method string) *http.Request {
	r, _ := http.NewRequest(method, "https://b.example/users/bob/inbox?x=1", nil)
	r.Header.Set("Date", fixedNow.Format(http.TimeFormat))
	r.Header.Set("Digest", "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
	r.Header.Set("Content-Digest", "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
	r.Header.Set("Content-Type", "application/activity+json")
	return r
}

func FuzzParseCavage(f *testing.F) {
	f.Add(cavageC1, "POST")
	f.Add(cavageC3, "POST")
	f.Add(`Signature keyId = "k" , algorithm="hs2019",created=1741064767,expires=1741064800.5,headers="(request-target) (created) (expires) host digest",signature="QUJD"`, "POST")
	f.Add(`keyId="k",headers="(request-target) host date accept",signature="QUJD"`, "GET")
	f.Add(`keyId="a\"b\\",signature=QUJD,x=`, "GET")
	pub := testKeys(f)
	f.Fuzz(func(t *testing.T, sig, method string) {
		r := fuzzRequest(http.MethodPost)
		if method == http.MethodGet {
			r.Method = method
		}
		r.Header["Signature"] = []string{sig}
		s, err := Parse(r, nil, Options{Now: fixedNow})
		if err != nil {
			if ReasonOf(err) == ReasonOther || ReasonOf(err) == ReasonNoSignature {
				t.Fatalf("unexpected reason for %q: %v", sig, err)
			}
			return
		}
		if s.KeyID == "" {
			t.Fatalf("accepted %q without keyId", sig)
		}
		for _, k := range pub {
			_ = s.Verify(k.pub)
		}
	})
}

func FuzzParseRFC9421(f *testing.F) {
	f.Add(b26Input, b26Sig, "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:")
	f.Add(`sig1=("@method" "@target-uri" "content-digest");created=1741064767;keyid="k";alg="rsa-v1_5-sha256"`, "sig1=:QUJD:", "sha-256=:AAAA:")
	f.Add(`sig1=("@method" "@target-uri" "@authority" "@scheme" "@request-target" "@path" "@query" "host" "date");created=1741064767;expires=1741064800;keyid="k";nonce="n";tag="t"`, "sig1=:QUJD:, sig2=:AA==:", "SHA-256=:AAAA:")
	f.Add(`a=(), b=1`, `a=?1`, `sha-256=1`)
	pub := testKeys(f)
	f.Fuzz(func(t *testing.T, input, sig, digest string) {
		r := fuzzRequest(http.MethodPost)
		r.Header["Signature-Input"] = []string{input}
		r.Header["Signature"] = []string{sig}
		r.Header["Content-Digest"] = []string{digest}
		s, err := Parse(r, nil, Options{Now: fixedNow})
		if err != nil {
			if ReasonOf(err) == ReasonOther || ReasonOf(err) == ReasonNoSignature {
				t.Fatalf("unexpected reason: %v", err)
			}
			return
		}
		if s.KeyID == "" || s.Created.IsZero() {
			t.Fatalf("accepted %q without keyid or created", input)
		}
		for _, k := range pub {
			_ = s.Verify(k.pub)
		}
	})
}
