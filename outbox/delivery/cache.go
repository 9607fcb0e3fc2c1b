package delivery

import (
	"context"
	"net"
	"strings"
	"sync"

	"herald/federation"
	"herald/federation/signature"
	"herald/store"
)

// keyCache holds parsed signing keys by local actor row id (0 is the
// instance actor): parsing a PEM key costs more than a signature's share of
// the work, and a fan-out signs thousands of times with one key.
type keyCache struct {
	db   *store.DB
	inst federation.Instance
	mu   sync.Mutex
	keys map[int64]signature.Key
}

func (k *keyCache) get(ctx context.Context, actorID int64) (signature.Key, error) {
	k.mu.Lock()
	key, ok := k.keys[actorID]
	k.mu.Unlock()
	if ok {
		return key, nil
	}
	var pemText, keyID string
	if actorID == 0 {
		ik, err := k.db.InstanceActorKey(ctx, federation.GenerateKeyPEM)
		if err != nil {
			return key, err
		}
		pemText, keyID = ik.PrivateKeyPEM, k.inst.InstanceKeyID()
	} else {
		a, err := k.db.ActorByID(ctx, actorID)
		if err != nil {
			return key, err
		}
		pemText, keyID = a.PrivateKeyPEM, k.inst.KeyID(a.Name)
	}
	priv, err := federation.ParsePrivateKeyPEM(pemText)
	if err != nil {
		return key, err
	}
	key = signature.Key{ID: keyID, Private: priv}
	k.mu.Lock()
	k.keys[actorID] = key
	k.mu.Unlock()
	return key, nil
}

// bodyCache holds activity bodies by row id, so a fan-out to thousands of
// inboxes reads (and holds) its activity once.
type bodyCache struct {
	db    *store.DB
	mu    sync.Mutex
	items map[int64]activityBody
}

type activityBody struct {
	iri       string
	actorID   int64
	actorName string // "" for the instance actor
	body      []byte
	// syncFollowers: addressed to the sender's followers, so each delivery
	// carries the FEP-8fcf header.
	syncFollowers bool
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
	it = activityBody{iri: a.IRI, actorID: a.ActorID, actorName: a.ActorName, body: a.Body, syncFollowers: a.SyncFollowers}
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

// hostname strips the port from host[:port]: blocks match host names.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return hostport
}
