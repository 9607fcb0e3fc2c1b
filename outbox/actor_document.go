package outbox

import (
	"crypto/ed25519"
	"html"
	"mime"
	"net/url"
	"path"
	"strings"
	"time"

	"herald/federation"
	"herald/store"
)

// Contexts every actor document carries: ActivityStreams, the security
// vocabulary (Fedify refuses a key whose actor document lacks it), the DID
// and Multikey contexts that define FEP-521a's assertionMethod and
// Multikey (in the order Fedify's own actors list them), and the few
// extension terms Mastodon reads from actors.
var actorContext = []any{
	"https://www.w3.org/ns/activitystreams",
	"https://w3id.org/security/v1",
	federation.DIDContext,
	federation.MultikeyContext,
	map[string]any{
		"manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
		"toot":                      "http://joinmastodon.org/ns#",
		"discoverable":              "toot:discoverable",
		"featured":                  map[string]any{"@id": "toot:featured", "@type": "@id"},
		"memorial":                  "toot:memorial",
		"schema":                    "http://schema.org#",
		"PropertyValue":             "schema:PropertyValue",
		"value":                     "schema:value",
		"alsoKnownAs":               map[string]any{"@id": "as:alsoKnownAs", "@type": "@id"},
		"movedTo":                   map[string]any{"@id": "as:movedTo", "@type": "@id"},
	},
}

// ActorDocument is the ActivityStreams document of a local actor, in the
// shape Mastodon serves and expects (mastodon-protocol.md 5.3, 5.4; the
// profile fields as app/serializers/activitypub/actor_serializer.rb writes
// them). It contains the public key only.
func ActorDocument(inst federation.Instance, a *store.Actor) map[string]any {
	id := inst.ActorID(a.Name)
	name := a.DisplayName
	if name == "" {
		name = a.Name
	}
	doc := map[string]any{
		"@context":                  actorContext,
		"id":                        id,
		"type":                      a.Type,
		"preferredUsername":         a.Name,
		"name":                      cleanText(name),
		"summary":                   federation.SummaryHTML(a.Summary),
		"url":                       inst.ProfileURL(a.Name),
		"inbox":                     inst.InboxURL(a.Name),
		"outbox":                    inst.OutboxURL(a.Name),
		"followers":                 inst.FollowersURL(a.Name),
		"following":                 inst.FollowingURL(a.Name),
		"endpoints":                 map[string]any{"sharedInbox": inst.SharedInboxURL(), "uploadMedia": inst.UploadMediaURL(a.Name)},
		"manuallyApprovesFollowers": a.ManualApproval,
		"discoverable":              a.Discoverable,
		"published":                 a.CreatedAt.UTC().Format(time.RFC3339),
		"publicKey": map[string]any{
			"id":           inst.KeyID(a.Name),
			"owner":        id,
			"publicKeyPem": a.PublicKeyPEM,
		},
		"featured":   inst.FeaturedURL(a.Name),
		"attachment": profileFields(a.Fields),
	}
	if mk := ed25519Multikey(inst, a); mk != nil {
		doc["assertionMethod"] = []any{mk}
	}
	if httpURL(a.AvatarURL) {
		doc["icon"] = imageRef(a.AvatarURL)
	}
	if httpURL(a.HeaderURL) {
		doc["image"] = imageRef(a.HeaderURL)
	}
	if a.Memorial {
		doc["memorial"] = true
	}
	// Account moves, as Mastodon's actor serializer writes them
	// (app/serializers/activitypub/actor_serializer.rb): the accounts that
	// may move here, and where this one went.
	if len(a.AlsoKnownAs) > 0 {
		doc["alsoKnownAs"] = a.AlsoKnownAs
	}
	if a.MovedTo != "" {
		doc["movedTo"] = a.MovedTo
	}
	return doc
}

// ed25519Multikey is the actor's Ed25519 key as FEP-521a publishes it, a
// Multikey controlled by the actor; nil if it has none (or it does not
// parse, which store never writes).
func ed25519Multikey(inst federation.Instance, a *store.Actor) map[string]any {
	if a.Ed25519PublicKeyPEM == "" {
		return nil
	}
	k, err := federation.ParsePublicKeyPEM(a.Ed25519PublicKeyPEM)
	pub, ok := k.(ed25519.PublicKey)
	if err != nil || !ok {
		return nil
	}
	return map[string]any{
		"id":                 inst.Ed25519KeyID(a.Name),
		"type":               "Multikey",
		"controller":         inst.ActorID(a.Name),
		"publicKeyMultibase": federation.EncodeEd25519Multibase(pub),
	}
}

// Ed25519KeyDocument is the document the keyid of the actor's Ed25519
// RFC 9421 signatures names (Instance.Ed25519SigningKeyID): the key as a
// CryptographicKey owned by the actor, the form Fedify verifies HTTP
// signatures with. nil if the actor has no Ed25519 key.
func Ed25519KeyDocument(inst federation.Instance, a *store.Actor) map[string]any {
	if a.Ed25519PublicKeyPEM == "" {
		return nil
	}
	return map[string]any{
		"@context":     "https://w3id.org/security/v1",
		"id":           inst.Ed25519SigningKeyID(a.Name),
		"type":         "CryptographicKey",
		"owner":        inst.ActorID(a.Name),
		"publicKeyPem": a.Ed25519PublicKeyPEM,
	}
}

// profileFields are the fields as Mastodon's PropertyValues: the value is
// HTML, a lone http(s) URL linked with rel="me" (which lets a site that
// links back verify the field).
func profileFields(fields []store.ProfileField) []any {
	out := []any{}
	for _, f := range fields {
		out = append(out, map[string]any{"type": "PropertyValue", "name": cleanText(f.Name), "value": FieldHTML(f.Value)})
	}
	return out
}

// FieldHTML is a profile field's value as HTML: escaped text, or a link
// when the value is one http(s) URL.
func FieldHTML(v string) string {
	if u, err := url.Parse(v); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && !strings.ContainsAny(v, " \t\n") {
		shown := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(v, "https://"), "http://"), "/")
		return `<a href="` + html.EscapeString(v) + `" target="_blank" rel="nofollow noopener me" translate="no">` + html.EscapeString(shown) + `</a>`
	}
	return html.EscapeString(v)
}

// imageRef is an avatar or header image as an actor names it, with the
// media type its file name implies (Mastodon reads it to pick a decoder).
func imageRef(u string) map[string]any {
	img := map[string]any{"type": "Image", "url": u}
	if p, err := url.Parse(u); err == nil {
		if t := mime.TypeByExtension(strings.ToLower(path.Ext(p.Path))); strings.HasPrefix(t, "image/") {
			img["mediaType"] = t
		}
	}
	return img
}

// InstanceActorDocument is the document of the instance actor at /actor: an
// Application whose key signs Herald's own fetches. Its preferredUsername
// is the host name, as Mastodon's is.
func InstanceActorDocument(inst federation.Instance, publicKeyPEM string, created time.Time) map[string]any {
	id := inst.InstanceActorID()
	return map[string]any{
		"@context":                  actorContext,
		"id":                        id,
		"type":                      "Application",
		"preferredUsername":         inst.Host(),
		"name":                      inst.Domain,
		"summary":                   "<p>The instance actor of " + html.EscapeString(inst.Domain) + ". It signs this server's requests.</p>",
		"url":                       inst.Base() + "/status",
		"inbox":                     id + "/inbox",
		"outbox":                    id + "/outbox",
		"endpoints":                 map[string]any{"sharedInbox": inst.SharedInboxURL()},
		"manuallyApprovesFollowers": true,
		"published":                 created.UTC().Format(time.RFC3339),
		"publicKey": map[string]any{
			"id":           inst.InstanceKeyID(),
			"owner":        id,
			"publicKeyPem": publicKeyPEM,
		},
	}
}
