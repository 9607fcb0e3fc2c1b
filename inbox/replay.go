package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// replayKey is what the replay defence remembers of an accepted activity:
// the authority that vouched for it (the verified signer's, or the origin
// that served it), its id, and a digest of the document as it was parsed
// (decoded and written again by json.Marshal, which sorts the keys at
// every level, so whitespace and key order do not count)
// without what each sending adds: an Object Integrity Proof (FEP-8b32's
// `proof`, which Fedify makes afresh for every delivery, the shared inbox's
// and the personal one's) or a Linked Data `signature`.
//
// The id alone is not enough: Misskey gives every Undo of a follow between
// two accounts the same id (.../follows/{follower}/{followee}/undo; only
// `published` differs), so an id-only key took a second unfollow for a
// replay and the ex-follower kept receiving followers-only posts. Mastodon
// and GoToSocial key nothing by activity id alone either: their handlers
// are idempotent (Mastodon locks on the id only while one copy is being
// processed). A replay (the same document again, within the signature's
// date window) still has the same key and is dropped, and the origin in
// the key means no server can mark another's activities as seen.
func replayKey(origin, id string, docJSON []byte) string {
	canonical := docJSON
	var content map[string]any
	if json.Unmarshal(docJSON, &content) == nil {
		if _, proof := content["proof"]; proof || content["signature"] != nil {
			delete(content, "proof")
			delete(content, "signature")
		}
		if c, err := json.Marshal(content); err == nil {
			canonical = c
		}
	}
	sum := sha256.Sum256(canonical)
	if id == "" {
		id = "(no id)"
	}
	return origin + " " + id + " sha256:" + hex.EncodeToString(sum[:])
}
