package delivery_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"herald/federation"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/store"
)

// peer is a remote server that verifies RFC 9421 signatures made with
// Ed25519 keys, as Fedify does, but answers 202 before it verifies, so
// only evidence may move Herald to them. Its actor, ed, signs with an
// Ed25519 key (edSigns) or an RSA one; it may publish an Ed25519 Multikey
// (FEP-521a) and serve NodeInfo.
type peer struct {
	*httptest.Server
	laterChecks
	h        *fedtest.Herald
	host, id string
	edSigns  bool
	fep521a  bool
	software [2]string // NodeInfo name and version; none when empty

	edPriv ed25519.PrivateKey
	edPEM  string
	rsa    crypto.Signer
	rsaPEM string
}

func newPeer(t *testing.T, h *fedtest.Herald, ip string, configure func(*peer)) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{h: h}
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	p.edPriv, p.edPEM = priv, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	privPEM, pubPEM, err := federation.GenerateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	p.rsa, _ = federation.ParsePrivateKeyPEM(privPEM)
	p.rsaPEM = pubPEM
	rsaPub, _ := federation.ParsePublicKeyPEM(h.Alice.PublicKeyPEM)
	edPub, _ := federation.ParsePublicKeyPEM(h.Alice.Ed25519PublicKeyPEM)
	p.laterChecks = laterChecks{now: h.Clock, rsa: rsaPub, ed: edPub, rfc9421: true}
	configure(p)
	p.Server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.Listener.Close()
	p.Listener = ln
	p.Start()
	t.Cleanup(p.Close)
	p.host = ln.Addr().String()
	p.id = "http://" + p.host + "/users/ed"
	return p
}

func (p *peer) serve(w http.ResponseWriter, r *http.Request) {
	base := "http://" + p.host
	switch {
	case r.Method == http.MethodPost:
		p.later(r)
		w.WriteHeader(http.StatusAccepted)
	case r.URL.Path == "/users/ed":
		key := map[string]any{"id": p.id + "#main-key", "owner": p.id, "publicKeyPem": p.rsaPEM}
		if p.edSigns {
			key["publicKeyPem"] = p.edPEM
		}
		doc := map[string]any{
			"@context": []any{federation.ASContext, federation.SecurityContext, federation.DIDContext, federation.MultikeyContext},
			"id":       p.id, "type": "Person", "preferredUsername": "ed", "inbox": p.id + "/inbox",
			"endpoints": map[string]any{"sharedInbox": base + "/inbox"}, "publicKey": key,
		}
		if p.fep521a {
			pub := p.edPriv.Public().(ed25519.PublicKey)
			doc["assertionMethod"] = []any{map[string]any{"id": p.id + "#ed25519-key", "type": "Multikey", "controller": p.id,
				"publicKeyMultibase": federation.EncodeEd25519Multibase(pub)}}
		}
		w.Header().Set("Content-Type", "application/activity+json")
		json.NewEncoder(w).Encode(doc)
	case r.URL.Path == "/.well-known/nodeinfo" && p.software[0] != "":
		json.NewEncoder(w).Encode(map[string]any{"links": []any{map[string]string{
			"rel": "http://nodeinfo.diaspora.software/ns/schema/2.1", "href": base + "/nodeinfo/2.1"}}})
	case r.URL.Path == "/nodeinfo/2.1" && p.software[0] != "":
		json.NewEncoder(w).Encode(map[string]any{"version": "2.1", "software": map[string]string{"name": p.software[0], "version": p.software[1]}})
	default:
		http.NotFound(w, r)
	}
}

func (p *peer) results() string {
	verified, bad := p.laterChecks.results()
	if len(bad) > 0 {
		return "bad: " + strings.Join(bad, "; ")
	}
	return strings.Join(verified, " ")
}

// send posts an activity by ed to Herald's shared inbox, signed with RFC
// 9421 (with its Ed25519 key when edSigns).
func (p *peer) send(t *testing.T, act map[string]any) {
	t.Helper()
	body, _ := json.Marshal(act)
	req, _ := http.NewRequest(http.MethodPost, p.h.URL+"/inbox", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/activity+json")
	var key crypto.Signer = p.rsa
	if p.edSigns {
		key = p.edPriv
	}
	if err := signature.Sign(req, body, signature.Key{ID: p.id + "#main-key", Private: key}, signature.RFC9421, p.h.Clock()); err != nil {
		t.Fatal(err)
	}
	if status, answer := p.h.Send(t, req, body); status != http.StatusAccepted {
		t.Fatalf("Herald answered %d %s", status, answer)
	}
}

// post has alice publish a note to ed and delivers it.
func (p *peer) post(t *testing.T) {
	t.Helper()
	res, body := p.h.Do(t, "POST", "/users/alice/outbox", p.h.Token, map[string]any{"type": "Note", "content": "<p>hi</p>", "to": []string{p.id}})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("outbox: %d %s", res.StatusCode, body)
	}
	p.h.Step(t)
}

// TestEvidenceMovesToEd25519: Herald signs a host's deliveries with
// Ed25519 only once the host showed evidence that it verifies them, never
// because it answered 2xx. A server whose own requests are signed with
// RFC 9421 and an Ed25519 key gets draft-cavage until its first request
// reaches Herald, and Ed25519 from then on (the Accept of its Follow
// first); one that signs with RSA and publishes an Ed25519 Multikey
// moves once it signs with RFC 9421; one that never signs but publishes a
// Multikey moves once its NodeInfo names software known to verify them.
func TestEvidenceMovesToEd25519(t *testing.T) {
	follow := func(p *peer) map[string]any {
		return map[string]any{"@context": federation.ASContext, "id": p.id + "/follows/1", "type": "Follow",
			"actor": p.id, "object": p.h.Inst.ActorID("alice")}
	}
	t.Run("signs with ed25519", func(t *testing.T) {
		h := fedtest.NewHerald(t)
		p := newPeer(t, h, "127.0.2.40", func(p *peer) { p.edSigns = true })
		for range 3 {
			p.post(t)
		}
		p.send(t, follow(p))
		h.Step(t) // the Accept
		for range 2 {
			p.post(t)
		}
		if got, want := p.results(), "cavage cavage cavage ed25519 ed25519 ed25519"; got != want {
			t.Errorf("the peer verified %q, want %q", got, want)
		}
		row, err := h.DB.HostSignaturesOf(context.Background(), p.host)
		if err != nil || row.RFC9421 != store.EvidenceSigned || row.Ed25519 != store.EvidenceSigned {
			t.Errorf("evidence recorded: %+v %v", row, err)
		}
	})
	t.Run("fep-521a then rfc9421", func(t *testing.T) {
		h := fedtest.NewHerald(t)
		p := newPeer(t, h, "127.0.2.41", func(p *peer) { p.fep521a = true })
		for range 2 {
			p.post(t) // its actor, with the Multikey, is fetched: half the evidence
		}
		p.send(t, follow(p)) // signed with RFC 9421 (RSA): the other half
		h.Step(t)
		if got, want := p.results(), "cavage cavage ed25519"; got != want {
			t.Errorf("the peer verified %q, want %q", got, want)
		}
	})
	for _, tc := range []struct {
		software [2]string
		want     string
	}{
		{[2]string{"hollo", "0.7.2"}, "ed25519 ed25519"},
		{[2]string{"misskey", "2024.10.1"}, "cavage cavage"},
	} {
		t.Run("fep-521a and nodeinfo "+tc.software[0], func(t *testing.T) {
			h := fedtest.NewHerald(t)
			p := newPeer(t, h, "127.0.2.42", func(p *peer) { p.fep521a, p.software = true, tc.software })
			// Publishing fetches the actor: half the evidence, so its
			// NodeInfo is read, in the background.
			res, body := h.Do(t, "POST", "/users/alice/outbox", h.Token, map[string]any{"type": "Note", "content": "<p>hi</p>", "to": []string{p.id}})
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("outbox: %d %s", res.StatusCode, body)
			}
			h.Node.Signatures.WaitNodeInfo()
			row, err := h.DB.HostSignaturesOf(context.Background(), p.host)
			if err != nil || row.NodeInfoAt.IsZero() || row.Software != tc.software[0] || row.SoftwareVersion != tc.software[1] {
				t.Fatalf("nodeinfo recorded: %+v %v", row, err)
			}
			h.Step(t)
			p.post(t)
			if got := p.results(); got != tc.want {
				t.Errorf("the peer verified %q, want %q", got, tc.want)
			}
		})
	}
}
