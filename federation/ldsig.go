package federation

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/piprate/json-gold/ld"

	"herald/federation/signature"
)

// Linked Data Signatures, as Mastodon makes them
// (app/lib/activitypub/linked_data_signature.rb; FEP-ae0c, "Mastodon LD
// Signatures"). A Mastodon-style relay forwards a post as it got it, signed
// over HTTP by the relay; Mastodon accepts it from the relay only if the
// document carries its author's RsaSignature2017, and drops it otherwise
// (app/services/activitypub/process_collection_service.rb). Herald signs,
// and never verifies: what it receives from a relay it takes from the
// origin instead.

// IdentityContext is the context of a signature's options document.
const IdentityContext = "https://w3id.org/identity/v1"

var (
	ldsigOnce   sync.Once
	ldsigErr    error
	ldsigLoader memLoader
)

// initLDSig builds the loader signatures use: the inbox's embedded
// contexts and identity/v1 (federation/contexts/identity-v1.jsonld, the
// text served at that URL, as Fedify's vocab-runtime and Mastodon's
// json-ld-preloaded preload it). The inbox's loader stays without it, so
// documents that name it are read as they were.
func initLDSig() {
	ldsigOnce.Do(func() {
		initLD()
		if ldErr != nil {
			ldsigErr = ldErr
			return
		}
		ldsigLoader = memLoader{}
		for u, d := range loader {
			ldsigLoader[u] = d
		}
		b, err := contextFiles.ReadFile("contexts/identity-v1.jsonld")
		if err != nil {
			ldsigErr = err
			return
		}
		var doc any
		if ldsigErr = json.Unmarshal(b, &doc); ldsigErr == nil {
			ldsigLoader[IdentityContext] = doc
		}
	})
}

// SignLD returns doc with a Mastodon-compatible RsaSignature2017 by keyID
// (key must be RSA): the SHA-256 hex digests of the canonical (URDNA2015)
// N-Quads of the signature options and of the document without its
// signature, concatenated and signed with RSA PKCS#1 v1.5 SHA-256. A
// document Herald cannot canonicalise (one whose @context it does not
// hold: nothing is fetched) is an error.
func SignLD(doc map[string]any, keyID string, key crypto.Signer, now time.Time) (map[string]any, error) {
	options := map[string]any{"creator": keyID, "created": now.UTC().Format(time.RFC3339)}
	toSign, err := LDSigningInput(doc, options)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256([]byte(toSign))
	var sig []byte
	if rk, ok := key.(*rsa.PrivateKey); ok {
		sig, err = signature.SignRSASHA256(rk, digest[:]) // the build's RSA, as deliveries sign
	} else {
		sig, err = key.Sign(rand.Reader, digest[:], crypto.SHA256)
	}
	if err != nil {
		return nil, fmt.Errorf("ld signature: %w", err)
	}
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	out["signature"] = map[string]any{"type": "RsaSignature2017", "creator": keyID, "created": options["created"],
		"signatureValue": base64.StdEncoding.EncodeToString(sig)}
	return out, nil
}

// LDSigningInput is what an LD signature signs (and a verifier checks):
// the hex SHA-256 of the canonical options (with the identity context;
// type, id and signatureValue left out) followed by that of the document
// without its signature.
func LDSigningInput(doc, options map[string]any) (string, error) {
	opts := map[string]any{"@context": IdentityContext}
	for k, v := range options {
		if k != "type" && k != "id" && k != "signatureValue" {
			opts[k] = v
		}
	}
	body := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "signature" {
			body[k] = v
		}
	}
	o, err := canonicalHash(opts)
	if err != nil {
		return "", err
	}
	d, err := canonicalHash(body)
	if err != nil {
		return "", err
	}
	return o + d, nil
}

// canonicalHash is the hex SHA-256 of a document's URDNA2015 N-Quads.
func canonicalHash(doc map[string]any) (string, error) {
	initLDSig()
	if ldsigErr != nil {
		return "", fmt.Errorf("json-ld setup: %w", ldsigErr)
	}
	o := ld.NewJsonLdOptions("")
	o.DocumentLoader = ldsigLoader
	o.Algorithm = ld.AlgorithmURDNA2015
	o.Format = "application/n-quads"
	out, err := ld.NewJsonLdProcessor().Normalize(doc, o)
	if err != nil {
		return "", fmt.Errorf("ld signature: canonicalising: %w", err)
	}
	s, _ := out.(string)
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:]), nil
}
