package delivery

import (
	"strconv"
	"strings"

	"herald/federation/signature"
	"herald/store"
)

// The signature rule: how each delivery is signed, from what the host has
// shown it verifies (store.HostSignatures, kept by Signatures in
// signatures.go and shared by every node through the database).
//
// A 2xx answer is never evidence. snac 2.75 answers 202 before it verifies
// and understands only draft-cavage (seen on the wire in issue 25: it
// logged "bad signature header" for every request Herald counted
// delivered); Misskey only parses the Signature header in its inbox route
// and queues the activity (packages/backend/src/server/
// ActivityPubServerService.ts), verifying it later in the queue
// (queue/processors/InboxProcessorService.ts). A runner that took a 2xx to
// an RFC 9421 probe as proof, and then signed with Ed25519, lost every
// later delivery to such a host. So a host is moved off draft-cavage with
// RSA, which every server verifies, only on evidence:
//
//   - RFC 9421 (signed with the actor's RSA key) once the host showed it
//     verifies RFC 9421: it refused our draft-cavage signature (400/401)
//     and took RFC 9421 in the same attempt, so its answer depended on the
//     signature; its own requests to us are signed with RFC 9421; it sent
//     an Accept-Signature header (RFC 9421 section 5); or its NodeInfo names
//     software known to verify RFC 9421 before it answers (knownVerifiers).
//   - RFC 9421 signed with the actor's Ed25519 key (keyid
//     <actor>/ed25519-key, a CryptographicKey document; about 35 times
//     cheaper to make than RSA-2048) once, besides that, it showed it
//     verifies an Ed25519 key: its own requests are signed with one, its
//     actors publish FEP-521a Ed25519 Multikeys, it asked for
//     alg="ed25519" in Accept-Signature, or its NodeInfo software is known
//     to verify them before it answers.
//
// Each attempt has a fallback for a 400 or 401, sent at once before the
// attempt counts ("double-knocking"): RFC 9421 for draft-cavage, draft-
// cavage for RSA RFC 9421, RSA RFC 9421 and then draft-cavage for Ed25519.
// When a fallback passes, the refusals are remembered: a host that refused
// RFC 9421 or Ed25519 from us is not sent it again until an operator
// resets it (herald signatures reset), and a host that refused
// draft-cavage leads with RFC 9421 from then on.

// knockSig is a way of signing: a scheme, with the Ed25519 key or RSA.
type knockSig struct {
	scheme  signature.Scheme
	ed25519 bool
}

var (
	cavageRSA  = knockSig{signature.Cavage, false}
	rfc9421RSA = knockSig{signature.RFC9421, false}
	rfc9421Ed  = knockSig{signature.RFC9421, true}
)

// String names the signature as the console and the CLI show it.
func (k knockSig) String() string {
	switch k {
	case rfc9421Ed:
		return "RFC 9421, Ed25519"
	case rfc9421RSA:
		return "RFC 9421, RSA"
	}
	return "draft-cavage, RSA"
}

// plan returns the knocks of an attempt, in order: each is sent when the
// one before got a 400 or 401. haveEd says whether the sender has an
// Ed25519 key. The chain always ends at a scheme the host has not been
// seen to refuse, and an Ed25519 signature falls back through RSA RFC
// 9421 to draft-cavage, so evidence that turns out wrong costs one attempt
// two extra requests, once.
func plan(s store.HostSignatures, haveEd bool) []knockSig {
	rfc, ed := verifies(s)
	switch {
	case ed && haveEd:
		return []knockSig{rfc9421Ed, rfc9421RSA, cavageRSA}
	case rfc:
		return []knockSig{rfc9421RSA, cavageRSA}
	default:
		return []knockSig{cavageRSA, rfc9421RSA}
	}
}

// verifies says what the evidence shows the host verifies, refusals taken
// into account.
func verifies(s store.HostSignatures) (rfc9421, ed25519 bool) {
	sw := knownSoftware(s.Software, s.SoftwareVersion)
	rfc9421 = (s.RFC9421 != "" || sw.rfc9421) && s.RefusedRFC9421At.IsZero()
	ed25519 = rfc9421 && (s.Ed25519 != "" || sw.ed25519) && s.RefusedEd25519At.IsZero()
	return rfc9421, ed25519
}

// refused is what a host refused when knock k got a 400 or 401 and a
// later one of the same attempt passed (store.Sig*).
func refused(k knockSig) string {
	switch k {
	case rfc9421Ed:
		return store.SigEd25519
	case rfc9421RSA:
		return store.SigRFC9421
	}
	return store.SigCavage
}

// halfKnown reports whether the host showed evidence for one of the two
// things an Ed25519 signature needs (RFC 9421, an Ed25519 key) but not the
// other, and refused neither: then its NodeInfo may complete the picture,
// and is worth reading.
func halfKnown(s store.HostSignatures) bool {
	if !s.RefusedRFC9421At.IsZero() || !s.RefusedEd25519At.IsZero() {
		return false
	}
	return (s.RFC9421 == "") != (s.Ed25519 == "")
}

// SignedWith names how deliveries to a host with this row are signed
// first ("draft-cavage, RSA", "RFC 9421, RSA" or "RFC 9421, Ed25519"), for
// the console and the CLI.
func SignedWith(s store.HostSignatures) string {
	return plan(s, true)[0].String()
}

// FromNodeInfo says what a NodeInfo software name and version is evidence
// for (knownVerifiers), for the console and the CLI.
func FromNodeInfo(name, version string) (rfc9421, ed25519 bool) {
	sw := knownSoftware(name, version)
	return sw.rfc9421, sw.ed25519
}

// knownVerifiers are the NodeInfo software names Herald takes as evidence,
// each from the first version that verifies the signature before it
// answers (so that its 401 is the answer to a signature it cannot check,
// and nothing it took is dropped afterwards for its signature). Only what
// was read in the software's source is here; anything else gets no
// evidence from its NodeInfo.
var knownVerifiers = []struct {
	name             string
	since            [3]int
	rfc9421, ed25519 bool
}{
	// Mastodon verifies in the inbox controller, before the activity is
	// queued (app/controllers/activitypub/inboxes_controller.rb:
	// before_action :require_actor_signature!, answering 401 from
	// app/controllers/concerns/signature_verification.rb). RFC 9421 is
	// verified by default from 4.5.0 (docs content/en/spec/security.md:
	// "4.5.0 – enabled support for validating signatures by default"),
	// with RSA only (app/lib/signed_request.rb, HttpMessageSignature:
	// rsa-v1_5-sha256).
	{name: "mastodon", since: [3]int{4, 5, 0}, rfc9421: true},
	// Hollo names itself "hollo" (src/federation/nodeinfo.ts) and runs on
	// Fedify (package.json of 0.7.0: @fedify/fedify ~1.8.12), whose inbox
	// verifies the HTTP signature before it queues anything and answers
	// 401 otherwise (handleInboxInternal in federation/handler.ts, read in
	// @fedify/fedify 2.3.6's build), RFC 9421 with RSA or Ed25519 keys
	// found as CryptographicKey documents (sig/http.ts,
	// rfc9421AlgorithmMap).
	{name: "hollo", since: [3]int{0, 7, 0}, rfc9421: true, ed25519: true},
}

type softwareVerifies struct{ rfc9421, ed25519 bool }

// knownSoftware looks a NodeInfo software name and version up in
// knownVerifiers. A pre-release of the first version does not count.
func knownSoftware(name, version string) softwareVerifies {
	for _, k := range knownVerifiers {
		if name != k.name {
			continue
		}
		v, pre, ok := parseVersion(version)
		if !ok {
			return softwareVerifies{}
		}
		for i := range v {
			if v[i] != k.since[i] {
				if v[i] > k.since[i] {
					return softwareVerifies{k.rfc9421, k.ed25519}
				}
				return softwareVerifies{}
			}
		}
		if pre {
			return softwareVerifies{}
		}
		return softwareVerifies{k.rfc9421, k.ed25519}
	}
	return softwareVerifies{}
}

// parseVersion reads "major.minor.patch" with an optional "-pre" and
// "+build" ("4.5.0+glitch", "4.5.0-beta.1"); pre reports a pre-release.
func parseVersion(s string) (v [3]int, pre, ok bool) {
	s, _, _ = strings.Cut(s, "+")
	s, p, hasPre := strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false, false
	}
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return v, false, false
		}
		v[i] = n
	}
	return v, hasPre && p != "", true
}
