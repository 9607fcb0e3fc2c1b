package delivery

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/store"
)

// keyCache holds parsed signing keys by local actor row id (0 is the
// instance actor): parsing a PEM key costs more than a signature's share of
// the work, and a fan-out signs thousands of times with one key. A key
// rotation in this process forgets the actor's key at once (forget); one
// made by another process (several on PostgreSQL) is picked up within
// keyTTL.
type keyCache struct {
	db    *store.DB
	inst  federation.Instance
	now   func() time.Time
	mu    sync.Mutex
	keys  map[int64]cachedKey
	epoch map[int64]int // bumped by forget, so a read racing it is not kept
}

type cachedKey struct {
	key signature.Key
	// ed is the actor's Ed25519 key (FEP-521a); its Private is nil for
	// the instance actor, which has none.
	ed signature.Key
	at time.Time
}

// keyTTL is how long a parsed key is used before it is read again.
const keyTTL = time.Minute

// forget drops the actor's key: the next signature reads the current one.
func (k *keyCache) forget(actorID int64) {
	k.mu.Lock()
	delete(k.keys, actorID)
	k.epoch[actorID]++
	k.mu.Unlock()
}

// get returns the actor's RSA key and its Ed25519 key (whose Private is
// nil when it has none).
func (k *keyCache) get(ctx context.Context, actorID int64) (rsaKey, edKey signature.Key, err error) {
	now := k.now()
	k.mu.Lock()
	c, ok := k.keys[actorID]
	epoch := k.epoch[actorID]
	k.mu.Unlock()
	if ok && now.Sub(c.at) < keyTTL {
		return c.key, c.ed, nil
	}
	var pemText, keyID, edPEM, edID string
	if actorID == 0 {
		ik, err := k.db.InstanceActorKey(ctx, federation.GenerateKeyPEM)
		if err != nil {
			return rsaKey, edKey, err
		}
		pemText, keyID = ik.PrivateKeyPEM, k.inst.InstanceKeyID()
	} else {
		a, err := k.db.ActorByID(ctx, actorID)
		if err != nil {
			return rsaKey, edKey, err
		}
		pemText, keyID = a.PrivateKeyPEM, k.inst.KeyID(a.Name)
		edPEM, edID = a.Ed25519PrivateKeyPEM, k.inst.Ed25519SigningKeyID(a.Name)
	}
	priv, err := federation.ParsePrivateKeyPEM(pemText)
	if err != nil {
		return rsaKey, edKey, err
	}
	rsaKey = signature.Key{ID: keyID, Private: priv}
	if edPEM != "" {
		// An unreadable Ed25519 key only costs the speed-up: sign with RSA.
		if p, err := federation.ParsePrivateKeyPEM(edPEM); err == nil {
			edKey = signature.Key{ID: edID, Private: p}
		}
	}
	k.mu.Lock()
	if k.epoch[actorID] == epoch {
		k.keys[actorID] = cachedKey{key: rsaKey, ed: edKey, at: now}
	}
	k.mu.Unlock()
	return rsaKey, edKey, nil
}

// bodyCache holds activity bodies by row id, so a fan-out to thousands of
// inboxes reads (and holds) its activity once.
type bodyCache struct {
	db    *store.DB
	inst  federation.Instance
	mu    sync.Mutex
	items map[int64]activityBody
}

type activityBody struct {
	iri       string
	typ       string
	actorID   int64
	actorName string // "" for the instance actor
	body      []byte
	// syncFollowers: addressed to the sender's followers, so each delivery
	// carries the FEP-8fcf header.
	syncFollowers bool
	// announces: an Update or Delete of the sending actor itself, which
	// its suspension does not hold (policy.AnnouncementDelivery).
	announces bool
}

const maxCachedBodies = 512

func (b *bodyCache) get(ctx context.Context, id int64) (activityBody, error) {
	b.mu.Lock()
	it, ok := b.items[id]
	b.mu.Unlock()
	if ok {
		return it, nil
	}
	a, err := b.db.DeliveryActivity(ctx, id)
	if err != nil {
		return it, err
	}
	it = activityBody{iri: a.IRI, typ: a.Type, actorID: a.ActorID, actorName: a.ActorName, body: a.Body, syncFollowers: a.SyncFollowers,
		announces: announcesActor(b.inst, a)}
	b.mu.Lock()
	if len(b.items) >= maxCachedBodies {
		// Forget everything: refilling costs one read per activity, and
		// bodies are only in demand during their fan-out.
		clear(b.items)
	}
	b.items[id] = it
	b.mu.Unlock()
	return it, nil
}

// announcesActor says whether a is one of the two activities a suspended
// actor still sends (policy.AnnouncementDelivery): the Delete of the actor,
// or an Update of it whose document says it is suspended. Any other
// Update of the actor (a profile edit queued before the suspension) waits
// like the rest, so it cannot arrive after the suspension's Update and
// undo it.
func announcesActor(inst federation.Instance, a *store.DeliveryActivity) bool {
	if a.ActorName == "" || a.ObjectIRI != inst.ActorID(a.ActorName) {
		return false
	}
	switch a.Type {
	case "Delete":
		return true
	case "Update":
		var doc struct {
			Object struct {
				Suspended bool `json:"suspended"`
			} `json:"object"`
		}
		return json.Unmarshal(a.Body, &doc) == nil && doc.Object.Suspended
	}
	return false
}
