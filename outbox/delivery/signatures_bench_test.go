package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/outbox/delivery"
	"herald/store"
)

// BenchmarkAcceptSignatureEvidence is what an answer's Accept-Signature
// costs the delivery that got it: for a host that shows it for the first
// time, the header parsed and the evidence written (one transaction) and
// read back; for a host already known, the header parsed and nothing
// written.
func BenchmarkAcceptSignatureEvidence(b *testing.B) {
	const header = `sig1=("@method" "@target-uri" "content-digest");alg="ed25519"`
	for _, known := range []bool{false, true} {
		b.Run(map[bool]string{false: "new-host", true: "known-host"}[known], func(b *testing.B) {
			db := pgtest.Open(b, store.SQLite)
			sigs := delivery.NewSignatures(db, nil, quiet, time.Now)
			ctx := context.Background()
			if known {
				sigs.AcceptSignature(ctx, "https://known.example/inbox", header)
			}
			b.ResetTimer()
			for i := range b.N {
				origin := "https://known.example/inbox"
				if !known {
					origin = fmt.Sprintf("https://h%d.example/inbox", i)
				}
				sigs.AcceptSignature(ctx, origin, header)
			}
		})
	}
}
