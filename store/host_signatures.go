package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// The host_signatures table (migration 0120): what each remote host has
// shown about the HTTP signatures it verifies. outbox/delivery/knocks.go
// decides from it how a delivery is signed; this file only keeps it.

// Kinds of evidence (the values of host_signatures.rfc9421 and .ed25519).
const (
	// EvidenceRefusedCavage: the host answered 400 or 401 to a draft-cavage
	// signature and 2xx to RFC 9421 in the same attempt (RFC 9421 only).
	EvidenceRefusedCavage = "refused-cavage"
	// EvidenceSigned: the host's own requests to us are signed that way
	// (RFC 9421, or with an Ed25519 key), and verified.
	EvidenceSigned = "signed"
	// EvidenceFEP521a: the host's actors publish Ed25519 Multikeys
	// (Ed25519 only).
	EvidenceFEP521a = "fep-521a"
	// EvidenceAcceptSignature: the host sent an Accept-Signature header
	// (RFC 9421 section 5); for Ed25519, one asking for alg="ed25519".
	EvidenceAcceptSignature = "accept-signature"
)

// Signature capabilities a host can show evidence for, or refuse.
const (
	SigCavage  = "draft-cavage" // refused only: it refused our draft-cavage signature
	SigRFC9421 = "rfc9421"
	SigEd25519 = "ed25519"
)

// HostSignatures is one host's row; the zero value (with Host set) is a
// host Herald has no evidence about.
type HostSignatures struct {
	Host string
	// RFC9421 and Ed25519 say how Herald knows the host verifies RFC 9421
	// and an Ed25519 key (Evidence*; "" for no evidence), and since when.
	RFC9421, Ed25519     string
	RFC9421At, Ed25519At time.Time
	// RefusedRFC9421At and RefusedEd25519At are when the host refused our
	// RSA RFC 9421 or Ed25519 signature (zero: never).
	RefusedRFC9421At, RefusedEd25519At time.Time
	// Software and SoftwareVersion are what its NodeInfo names, read at
	// NodeInfoAt (zero: never read).
	Software, SoftwareVersion string
	NodeInfoAt                time.Time
	UpdatedAt                 time.Time
}

// hostSignatureColumns is the SELECT list scanned by scanHostSignatures.
const hostSignatureColumns = `host, rfc9421, rfc9421_at, ed25519, ed25519_at, refused_rfc9421_at, refused_ed25519_at,
	software, software_version, nodeinfo_at, updated_at`

func scanHostSignatures(scan func(...any) error) (HostSignatures, error) {
	var s HostSignatures
	var r, e, rr, re, ni, up int64
	err := scan(&s.Host, &s.RFC9421, &r, &s.Ed25519, &e, &rr, &re, &s.Software, &s.SoftwareVersion, &ni, &up)
	s.RFC9421At, s.Ed25519At, s.RefusedRFC9421At, s.RefusedEd25519At = msTime(r), msTime(e), msTime(rr), msTime(re)
	s.NodeInfoAt, s.UpdatedAt = msTime(ni), msTime(up)
	return s, err
}

// msTime is a unix-millisecond column as a time; 0 is the zero time.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// HostSignaturesOf returns host's row, or ErrNotFound.
func (q *Queries) HostSignaturesOf(ctx context.Context, host string) (HostSignatures, error) {
	s, err := scanHostSignatures(q.r.QueryRowContext(ctx, `SELECT `+hostSignatureColumns+` FROM host_signatures WHERE host = $1`, host).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return HostSignatures{}, ErrNotFound
	}
	return s, err
}

// AllHostSignatures returns every row, by host.
func (q *Queries) AllHostSignatures(ctx context.Context) ([]HostSignatures, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+hostSignatureColumns+` FROM host_signatures ORDER BY host`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HostSignatures
	for rows.Next() {
		s, err := scanHostSignatures(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Evidence is what a host showed at once: how it showed that it verifies
// RFC 9421 and an Ed25519 key (Evidence*), "" for what it did not show.
type Evidence struct {
	RFC9421, Ed25519 string
}

// NoteSignatureEvidence records the evidence host showed, in one write; a
// kind it did not show keeps what was recorded before. A refusal recorded
// before stays: the host refused that signature from us.
func (q *Queries) NoteSignatureEvidence(ctx context.Context, host string, e Evidence, at time.Time) error {
	ms := at.UnixMilli()
	whenShown := func(how string) int64 {
		if how == "" {
			return 0
		}
		return ms
	}
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO host_signatures(host, rfc9421, rfc9421_at, ed25519, ed25519_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT(host) DO UPDATE SET
				rfc9421    = CASE WHEN excluded.rfc9421 = '' THEN host_signatures.rfc9421 ELSE excluded.rfc9421 END,
				rfc9421_at = CASE WHEN excluded.rfc9421 = '' THEN host_signatures.rfc9421_at ELSE excluded.rfc9421_at END,
				ed25519    = CASE WHEN excluded.ed25519 = '' THEN host_signatures.ed25519 ELSE excluded.ed25519 END,
				ed25519_at = CASE WHEN excluded.ed25519 = '' THEN host_signatures.ed25519_at ELSE excluded.ed25519_at END,
				updated_at = excluded.updated_at`,
			host, e.RFC9421, whenShown(e.RFC9421), e.Ed25519, whenShown(e.Ed25519), ms)
		return err
	})
}

// NoteSignatureRefusal records that host answered 400 or 401 to our
// signature of kind what and 2xx to the fallback in the same attempt. A
// refused draft-cavage signature is evidence for RFC 9421 (the fallback
// that passed), and lifts an earlier refusal of RFC 9421: the host changed.
func (q *Queries) NoteSignatureRefusal(ctx context.Context, host, what string, at time.Time) error {
	var query string
	switch what {
	case SigCavage:
		query = `INSERT INTO host_signatures(host, rfc9421, rfc9421_at, updated_at) VALUES ($1, '` + EvidenceRefusedCavage + `', $2, $2)
			ON CONFLICT(host) DO UPDATE SET rfc9421 = '` + EvidenceRefusedCavage + `', rfc9421_at = $2, refused_rfc9421_at = 0, updated_at = $2`
	case SigRFC9421:
		query = `INSERT INTO host_signatures(host, refused_rfc9421_at, updated_at) VALUES ($1, $2, $2)
			ON CONFLICT(host) DO UPDATE SET refused_rfc9421_at = $2, updated_at = $2`
	case SigEd25519:
		query = `INSERT INTO host_signatures(host, refused_ed25519_at, updated_at) VALUES ($1, $2, $2)
			ON CONFLICT(host) DO UPDATE SET refused_ed25519_at = $2, updated_at = $2`
	default:
		return errors.New("store: refusal of an unknown signature " + what)
	}
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, query, host, at.UnixMilli())
		return err
	})
}

// NoteNodeInfo records what host's NodeInfo names ("" when it serves
// none), read at at.
func (q *Queries) NoteNodeInfo(ctx context.Context, host, software, version string, at time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `INSERT INTO host_signatures(host, software, software_version, nodeinfo_at, updated_at) VALUES ($1, $2, $3, $4, $4)
			ON CONFLICT(host) DO UPDATE SET software = $2, software_version = $3, nodeinfo_at = $4, updated_at = $4`,
			host, software, version, at.UnixMilli())
		return err
	})
}

// ResetHostSignatures forgets what Herald learnt about host's signatures
// (every host when host is ""): it is sent draft-cavage again until it
// shows evidence anew. It returns how many rows it removed.
func (q *Queries) ResetHostSignatures(ctx context.Context, host string) (n int64, err error) {
	err = q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM host_signatures WHERE $1 = '' OR host = $1`, host)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n, err
}
