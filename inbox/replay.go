package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// replayKey is what the replay defence remembers of an accepted activity:
// the authority that vouched for it (the verified signer's, or the origin
// that served it), its id, and a digest of the document as it was parsed
// (json.Marshal sorts the keys, so whitespace and key order do not count).
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
func replayKey(origin, id string, doc map[string]any, body []byte) string {
	canonical, err := json.Marshal(doc)
	if err != nil {
		canonical = body
	}
	sum := sha256.Sum256(canonical)
	if id == "" {
		id = "(no id)"
	}
	return origin + " " + id + " sha256:" + hex.EncodeToString(sum[:])
}
