package delivery

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/dunglas/httpsfv"

	"herald/federation"
	"herald/federation/signature"
	"herald/host"
	"herald/nodeinfo"
	"herald/policy"
	"herald/store"
)

// Signatures is what this node knows of the HTTP signatures each remote
// host verifies (the evidence of knocks.go): the host_signatures rows,
// held in memory for the runner and reread every SignaturesRefresh so the
// evidence another node recorded, and an operator's reset, count here too.
// The inbox (a verified request's scheme and key), the actor fetcher (an
// actor's FEP-521a keys) and the runner (refusals, Accept-Signature
// answers) record evidence through it. Its methods may be called on a nil
// *Signatures, which records nothing.
type Signatures struct {
	db     *store.DB
	client *federation.Client // reads NodeInfo; nil reads none
	log    *slog.Logger
	now    func() time.Time
	// Policy is the federation policy NodeInfo reads obey: a host it
	// refuses is never contacted. nil reads no NodeInfo at all.
	Policy *policy.Live

	mu       sync.Mutex
	hosts    map[string]store.HostSignatures
	loadedAt time.Time            // when hosts was last read (real time)
	touched  map[string]bool      // while a reread runs: hosts changed here meanwhile ("" for all)
	noted    map[string]time.Time // host|evidence -> when this process last wrote it
	reading  map[string]bool      // hosts whose NodeInfo this process read or is reading
	readers  chan struct{}        // NodeInfo reads at once
	// reads numbers the reloads as they start, and stored is, by host,
	// the number of the reload whose row the copy holds: a reload that
	// started before another stored its row is older, and is dropped.
	reads  uint64
	stored map[string]uint64
	bg     sync.WaitGroup // NodeInfo reads running (WaitNodeInfo)
}

// NewSignatures makes a node's Signatures on db. client reads the NodeInfo
// of a host with half the evidence an Ed25519 signature needs (nil: none
// is read); now is the clock of the times recorded.
func NewSignatures(db *store.DB, client *federation.Client, log *slog.Logger, now func() time.Time) *Signatures {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Signatures{db: db, client: client, log: log, now: now,
		hosts: map[string]store.HostSignatures{}, noted: map[string]time.Time{}, reading: map[string]bool{},
		readers: make(chan struct{}, 2), stored: map[string]uint64{}}
}

const (
	// SignaturesRefresh is how often the rows are reread: evidence another
	// node recorded, or a reset made by `herald signatures reset`, counts
	// within it.
	SignaturesRefresh = 10 * time.Second
	// noteEvery is how often one process writes the same evidence of one
	// host again (refreshing its time), so a host that signs every request
	// costs one write a day, not one a request.
	noteEvery = 24 * time.Hour
	// nodeInfoEvery is how long a host's NodeInfo is trusted before it is
	// read again (its software may have been upgraded).
	nodeInfoEvery = 30 * 24 * time.Hour
	// maxNoted bounds the write memory; when full it starts afresh.
	maxNoted = 100_000
)

// of returns host's row as this node knows it (the zero row, with Host
// set, when Herald has no evidence).
func (s *Signatures) of(ctx context.Context, host string) store.HostSignatures {
	if s == nil {
		return store.HostSignatures{Host: host}
	}
	s.refresh(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if row, ok := s.hosts[host]; ok {
		return row
	}
	return store.HostSignatures{Host: host}
}

// refresh rereads every row when the copy is older than SignaturesRefresh.
// The table holds only hosts that showed something, a small part of those
// Herald delivers to. What this process changed while the reread ran is
// kept as it is here. On an error the last copy stays.
func (s *Signatures) refresh(ctx context.Context) {
	s.mu.Lock()
	if time.Since(s.loadedAt) < SignaturesRefresh {
		s.mu.Unlock()
		return
	}
	s.loadedAt = time.Now() // one reader at a time; the others use the copy
	s.touched = map[string]bool{}
	s.mu.Unlock()
	rows, err := s.db.AllHostSignatures(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	touched := s.touched
	s.touched = nil
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("delivery: read host signatures", "err", err)
		}
		return
	}
	hosts := make(map[string]store.HostSignatures, len(rows))
	for _, r := range rows {
		hosts[r.Host] = r
	}
	if touched[""] {
		hosts = map[string]store.HostSignatures{}
	}
	for h := range touched {
		if row, ok := s.hosts[h]; ok {
			hosts[h] = row
		} else {
			delete(hosts, h)
		}
	}
	s.hosts = hosts
}

// touch notes, under s.mu, that host's row changed here (while a reread
// runs, so that it does not undo the change).
func (s *Signatures) touch(host string) {
	if s.touched != nil {
		s.touched[host] = true
	}
}

// reload rereads one host's row after this process wrote it. Two reloads
// of one host may finish in either order (the inbox's evidence and a
// NodeInfo read in the background, say); the row of the one that started
// last is kept, since it saw every write committed before it started: an
// older row stored after it would undo evidence until the next refresh.
func (s *Signatures) reload(ctx context.Context, host string) store.HostSignatures {
	s.mu.Lock()
	s.reads++
	mine := s.reads
	s.mu.Unlock()
	row, err := s.db.HostSignaturesOf(ctx, host)
	s.mu.Lock()
	defer s.mu.Unlock()
	if mine < s.stored[host] {
		if cur, ok := s.hosts[host]; ok {
			return cur
		}
		return store.HostSignatures{Host: host}
	}
	if err == nil || errors.Is(err, store.ErrNotFound) {
		s.stored[host] = mine
	}
	switch {
	case err == nil:
		s.hosts[host] = row
		s.touch(host)
	case errors.Is(err, store.ErrNotFound):
		delete(s.hosts, host)
		s.touch(host)
		row = store.HostSignatures{Host: host}
	default:
		row = s.hosts[host]
	}
	return row
}

// evidence records what host showed (in one write), unless this process
// wrote the same within noteEvery and the row still has it. origin
// (scheme://host) is where its NodeInfo would be read.
func (s *Signatures) evidence(ctx context.Context, host, origin string, e store.Evidence) {
	if s == nil || host == "" || e == (store.Evidence{}) {
		return
	}
	key := host + "|" + e.RFC9421 + "|" + e.Ed25519
	now := s.now()
	s.mu.Lock()
	last, seen := s.noted[key]
	row, known := s.hosts[host]
	current := known && (e.RFC9421 == "" || row.RFC9421 != "") && (e.Ed25519 == "" || row.Ed25519 != "")
	if seen && current && now.Sub(last) < noteEvery {
		s.mu.Unlock()
		return
	}
	if len(s.noted) >= maxNoted {
		s.noted = map[string]time.Time{}
	}
	s.noted[key] = now
	s.mu.Unlock()
	if err := s.db.NoteSignatureEvidence(ctx, host, e, now); err != nil {
		s.log.Error("delivery: record signature evidence", "host", host, "err", err)
		return
	}
	if !current {
		s.log.Info("delivery: signature evidence", "host", host, "rfc9421", e.RFC9421, "ed25519", e.Ed25519)
	}
	s.maybeReadNodeInfo(ctx, s.reload(ctx, host), origin)
}

// refusal records that host answered 400 or 401 to our signature of kind
// what (store.Sig*) and 2xx to the fallback.
func (s *Signatures) refusal(ctx context.Context, host, what string) {
	if s == nil {
		return
	}
	if err := s.db.NoteSignatureRefusal(ctx, host, what, s.now()); err != nil {
		s.log.Error("delivery: record signature refusal", "host", host, "err", err)
		return
	}
	s.log.Info("delivery: host refused a signature", "host", host, "refused", what)
	s.reload(ctx, host)
}

// SignedRequest records what a verified request from a remote server
// shows: the scheme it was signed with, whether its key is Ed25519, and any
// Accept-Signature header it carried. keyID is the signature's keyId (its
// host is the host the evidence is about). Call it only once the signature
// verified.
func (s *Signatures) SignedRequest(ctx context.Context, keyID string, scheme signature.Scheme, key crypto.PublicKey, acceptSignature string) {
	if s == nil {
		return
	}
	host, origin, ok := hostOrigin(keyID)
	if !ok {
		return
	}
	var e store.Evidence
	if scheme == signature.RFC9421 {
		e.RFC9421 = store.EvidenceSigned
	}
	if _, ok := key.(ed25519.PublicKey); ok {
		e.Ed25519 = store.EvidenceSigned
	}
	s.evidence(ctx, host, origin, e)
	s.AcceptSignature(ctx, origin, acceptSignature)
}

// AcceptSignature records an Accept-Signature header (RFC 9421 section 5)
// that the server at origin sent, in a response to a delivery or in a
// verified request: it asks for RFC 9421 signatures, so it verifies them;
// a member asking for alg="ed25519" shows it verifies Ed25519 too. An empty
// or unparsable header records nothing.
func (s *Signatures) AcceptSignature(ctx context.Context, origin, header string) {
	if s == nil || strings.TrimSpace(header) == "" {
		return
	}
	host, origin, ok := hostOrigin(origin)
	if !ok {
		return
	}
	dict, err := httpsfv.UnmarshalDictionary([]string{header})
	if err != nil || len(dict.Names()) == 0 {
		return
	}
	e := store.Evidence{RFC9421: store.EvidenceAcceptSignature}
	for _, name := range dict.Names() {
		m, _ := dict.Get(name)
		if list, ok := m.(httpsfv.InnerList); ok {
			if alg, ok := list.Params.Get("alg"); ok && alg == "ed25519" {
				e.Ed25519 = store.EvidenceAcceptSignature
			}
		}
	}
	s.evidence(ctx, host, origin, e)
}

// ActorFetched records what a fetched remote actor shows: an Ed25519
// Multikey of its own in assertionMethod (FEP-521a) is evidence that the
// software on its host verifies Ed25519 keys. Only an actor whose inbox is
// on its own host counts, so that no server can speak for another's.
// (Multikeys are read from the document as most servers send it,
// compacted against the AS2 context with the DID and Multikey contexts
// beside it, as Fedify and Mitra do.)
func (s *Signatures) ActorFetched(ctx context.Context, a *federation.RemoteActor) {
	if s == nil || !publishesEd25519(a) {
		return
	}
	host, origin, ok := hostOrigin(a.ID)
	if inboxHost, _, _ := hostOrigin(a.Inbox); !ok || inboxHost != host {
		return
	}
	s.evidence(ctx, host, origin, store.Evidence{Ed25519: store.EvidenceFEP521a})
}

// publishesEd25519 reports whether the actor lists an Ed25519 Multikey of
// its own (controller the actor, id on its host) in assertionMethod.
func publishesEd25519(a *federation.RemoteActor) bool {
	methods, ok := a.Document["assertionMethod"].([]any)
	if !ok {
		if m, isMap := a.Document["assertionMethod"].(map[string]any); isMap {
			methods = []any{m}
		}
	}
	actorHost := host.AuthorityOf(a.ID)
	for _, m := range methods {
		mk, ok := m.(map[string]any)
		if !ok || federation.FirstString(mk["type"]) != "Multikey" || federation.IDOf(mk["controller"]) != a.ID ||
			host.AuthorityOf(federation.IDOf(mk["id"])) != actorHost {
			continue
		}
		if _, err := federation.DecodeEd25519Multibase(federation.FirstString(mk["publicKeyMultibase"])); err == nil {
			return true
		}
	}
	return false
}

// Reset forgets what Herald learnt about host's signatures (every host's
// when host is ""), here and in the database, and returns how many hosts
// it forgot. Other nodes forget within SignaturesRefresh.
func (s *Signatures) Reset(ctx context.Context, host string) (int64, error) {
	n, err := s.db.ResetHostSignatures(ctx, host)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for h := range s.hosts {
		if host == "" || h == host {
			delete(s.hosts, h)
		}
	}
	s.touch(host)
	for k := range s.noted {
		if host == "" || strings.HasPrefix(k, host+"|") {
			delete(s.noted, k)
		}
	}
	for h := range s.reading {
		if host == "" || h == host {
			delete(s.reading, h)
		}
	}
	return n, nil
}

// maybeReadNodeInfo reads host's NodeInfo in the background when it has
// half the evidence an Ed25519 signature needs (halfKnown) and its
// NodeInfo was not read in nodeInfoEvery, at most two hosts at a time
// (a host that finds both busy is read at its next evidence). A host the
// federation policy refuses is never contacted.
func (s *Signatures) maybeReadNodeInfo(ctx context.Context, row store.HostSignatures, origin string) {
	if s.client == nil || origin == "" || !halfKnown(row) || (!row.NodeInfoAt.IsZero() && s.now().Sub(row.NodeInfoAt) < nodeInfoEvery) {
		return
	}
	s.mu.Lock()
	if s.reading[row.Host] {
		s.mu.Unlock()
		return
	}
	select {
	case s.readers <- struct{}{}:
	default:
		s.mu.Unlock()
		return
	}
	s.reading[row.Host] = true
	s.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bg.Done()
		defer func() { <-s.readers }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		if s.Policy == nil {
			return
		}
		a, err := host.ParseAuthority(row.Host)
		if err != nil {
			return
		}
		if p, err := s.Policy.Get(ctx); err != nil || p.Host(a.Name).Refused() {
			return
		}
		sw, err := nodeinfo.Read(ctx, s.client, origin)
		if err != nil {
			s.log.Debug("delivery: no nodeinfo", "host", row.Host, "err", err)
		}
		if err := s.db.NoteNodeInfo(ctx, row.Host, sw.Name, sw.Version, s.now()); err != nil {
			s.log.Error("delivery: record nodeinfo", "host", row.Host, "err", err)
			return
		}
		s.reload(ctx, row.Host)
	}()
}

// WaitNodeInfo waits for the NodeInfo reads started so far to finish,
// their results recorded and in this node's copy: for tests, which must
// wait on that rather than on the row in the database (the copy follows
// the row a moment later).
func (s *Signatures) WaitNodeInfo() {
	if s != nil {
		s.bg.Wait()
	}
}

// hostOrigin returns the host[:port] (as deliveries name hosts:
// store.InboxHost) and the scheme://host[:port] of an absolute http(s) URL.
// It is the one place evidence is keyed by host: the inbox, the fetcher
// and the runner all record through it, and the runner looks the evidence
// up by the delivery's host, so the two must stay the same function of a
// URL.
func hostOrigin(raw string) (host, origin string, ok bool) {
	host, err := store.InboxHost(raw)
	if err != nil {
		return "", "", false
	}
	u, _ := url.Parse(raw) // it parsed in InboxHost
	return host, u.Scheme + "://" + host, true
}
