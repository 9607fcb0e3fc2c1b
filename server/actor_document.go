package server

import (
	"html"
	"time"

	"herald/federation"
	"herald/store"
)

// Contexts every actor document carries: ActivityStreams, the security
// vocabulary (Fedify refuses a key whose actor document lacks it), and the
// few extension terms Mastodon reads from actors.
var actorContext = []any{
	"https://www.w3.org/ns/activitystreams",
	"https://w3id.org/security/v1",
	map[string]any{
		"manuallyApprovesFollowers": "as:manuallyApprovesFollowers",
		"toot":                      "http://joinmastodon.org/ns#",
		"discoverable":              "toot:discoverable",
	},
}

// localActorDocument is the ActivityStreams document of a local actor, in
// the shape Mastodon serves and expects (mastodon-protocol.md 5.3, 5.4).
// It contains the public key only.
func localActorDocument(inst federation.Instance, a *store.Actor) map[string]any {
	id := inst.ActorID(a.Name)
	name := a.DisplayName
	if name == "" {
		name = a.Name
	}
	return map[string]any{
		"@context":                  actorContext,
		"id":                        id,
		"type":                      a.Type,
		"preferredUsername":         a.Name,
		"name":                      name,
		"summary":                   federation.SummaryHTML(a.Summary),
		"url":                       inst.ProfileURL(a.Name),
		"inbox":                     inst.InboxURL(a.Name),
		"outbox":                    inst.OutboxURL(a.Name),
		"followers":                 inst.FollowersURL(a.Name),
		"following":                 inst.FollowingURL(a.Name),
		"endpoints":                 map[string]any{"sharedInbox": inst.SharedInboxURL()},
		"manuallyApprovesFollowers": a.ManualApproval,
		"discoverable":              true,
		"published":                 a.CreatedAt.UTC().Format(time.RFC3339),
		"publicKey": map[string]any{
			"id":           inst.KeyID(a.Name),
			"owner":        id,
			"publicKeyPem": a.PublicKeyPEM,
		},
	}
}

// instanceActorDocument is the document of the instance actor at /actor: an
// Application whose key signs Herald's own fetches. Its preferredUsername
// is the host name, as Mastodon's is.
func instanceActorDocument(inst federation.Instance, publicKeyPEM string, created time.Time) map[string]any {
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
