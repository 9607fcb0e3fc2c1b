package mastoapi

import (
	"hash/fnv"
	"sync"
	"time"
)

// accountCacheSize bounds the remote accounts kept rendered: a few MB.
const accountCacheSize = 4096

// accountCache keeps remote accounts as remoteAccount rendered them, by
// actor id, the time Herald fetched its document and a hash of the
// document: a page of 40 statuses would otherwise parse 40 actor
// documents and sanitise 40 profiles on every request. A document that
// changed (an Update within the second of a fetch too) is rendered again.
// When full, the cache starts over.
type accountCache struct {
	mu sync.Mutex
	m  map[string]cachedAccount
}

type cachedAccount struct {
	fetched time.Time
	doc     uint64 // documentHash
	acc     Account
}

// documentHash tells one version of an actor's document from another.
func documentHash(doc []byte) uint64 {
	h := fnv.New64a()
	h.Write(doc)
	return h.Sum64()
}

// get is the account rendered from doc, fetched at fetched.
func (c *accountCache) get(iri string, fetched time.Time, doc []byte) (Account, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[iri]
	if !ok || !e.fetched.Equal(fetched) || e.doc != documentHash(doc) {
		return Account{}, false
	}
	return e.acc, true
}

// put keeps acc, rendered from doc, fetched at fetched.
func (c *accountCache) put(iri string, fetched time.Time, doc []byte, acc Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= accountCacheSize {
		c.m = make(map[string]cachedAccount, 64)
	}
	c.m[iri] = cachedAccount{fetched: fetched, doc: documentHash(doc), acc: acc}
}
