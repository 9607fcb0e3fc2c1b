package delivery

import "herald/federation/signature"

// What the runner remembers of each host's signature verification, learnt
// from its answers as it delivers (in memory, like every per-host state
// of the runner: a restart learns again, at the cost of one extra knock
// per host).
//
// Every host starts on draft-cavage, which every Mastodon version
// verifies. A host that refuses it (400/401) gets RFC 9421 at once; one
// that takes it is asked once, on its next delivery, with RFC 9421 first
// (falling back to draft-cavage), since servers that verify both (Fedify,
// Mastodon 4.5+) cannot be told apart otherwise. Only a host that has
// accepted an RFC 9421 signature from us is ever sent one made with the
// actor's Ed25519 key (FEP-521a; keyid <actor>/ed25519-key, a CryptographicKey document): RSA-2048 signing
// bounds a sender at about 2,000 deliveries a second on two cores, and an
// Ed25519 signature costs a thirtieth of that. A 400 or 401 to it falls
// back to RSA RFC 9421 in the same attempt, and the host is not asked
// again.

// knock is one host's memory. The zero value is a host never delivered to.
type knock struct {
	scheme  signature.Scheme // the scheme that last worked; "" for none yet
	probed  bool             // a draft-cavage host was asked once with RFC 9421
	ed25519 int8             // 1: verifies our Ed25519 key; -1: refused it; 0: not known
}

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

// plan returns the first knock and the fallback for a 400 or 401. haveEd
// says whether the sender has an Ed25519 key.
func (k knock) plan(haveEd bool) (first, fallback knockSig) {
	switch {
	case k.scheme == signature.RFC9421 && k.ed25519 >= 0 && haveEd:
		return rfc9421Ed, rfc9421RSA
	case k.scheme == signature.RFC9421:
		return rfc9421RSA, cavageRSA
	case k.scheme == signature.Cavage && !k.probed:
		return rfc9421RSA, cavageRSA
	default:
		return cavageRSA, rfc9421RSA
	}
}

// learn updates the memory after a 2xx: first was the first knock, used
// the one that succeeded, refused whether first got a 400 or 401.
func (k knock) learn(first, used knockSig, refused bool) knock {
	if k.scheme == signature.Cavage && first == rfc9421RSA {
		k.probed = true // asked once, whatever the answer
	}
	switch {
	case first.ed25519 && !refused:
		k.ed25519 = 1
	case first.ed25519 && refused:
		k.ed25519 = -1
	}
	k.scheme = used.scheme
	return k
}
