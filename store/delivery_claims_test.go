package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"herald/internal/pgtest"
	"herald/store"
)

// TestClaimPerHostRoom: a claim takes no more of a host than its room,
// even when that host's backlog is due before every other row, so the
// other hosts' rows are claimed in the same claim; hosts left out, or with
// no room, get none.
func TestClaimPerHostRoom(t *testing.T) { pgtest.Each(t, testClaimPerHostRoom) }

func testClaimPerHostRoom(t *testing.T, engine store.Engine) {
	ctx := context.Background()
	now := time.Now()
	for _, tc := range []struct {
		name    string
		limit   int
		room    map[string]int // absent: 16
		exclude []string
		want    map[string]int
	}{
		{name: "backlog first", limit: 50, want: map[string]int{"big.example": 16, "small.example": 10}},
		{name: "room left", limit: 50, room: map[string]int{"big.example": 3}, want: map[string]int{"big.example": 3, "small.example": 10}},
		{name: "no room", limit: 50, room: map[string]int{"big.example": 0}, want: map[string]int{"small.example": 10}},
		{name: "excluded", limit: 50, exclude: []string{"big.example"}, want: map[string]int{"small.example": 10}},
		{name: "limit", limit: 20, want: map[string]int{"big.example": 16, "small.example": 4}},
		{name: "small limit", limit: 5, want: map[string]int{"big.example": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := pgtest.Open(t, engine)
			var big, small []string
			for i := range 100 {
				big = append(big, fmt.Sprintf("https://big.example/users/%d/inbox", i))
			}
			for i := range 10 {
				small = append(small, fmt.Sprintf("https://small.example/users/%d/inbox", i))
			}
			// The backlog is due first.
			for i, inboxes := range [][]string{big, small} {
				_, err := db.EnqueueActivity(ctx, store.OutActivity{IRI: fmt.Sprintf("https://here.example/a/%d", i), Type: "Create", Body: []byte("{}")},
					inboxes, now.Add(time.Duration(i-1)*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
			}
			room := func(host string) int {
				if n, ok := tc.room[host]; ok {
					return n
				}
				return 16
			}
			got, err := db.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "p", Lane: store.LaneNormal, Limit: tc.limit,
				Exclude: tc.exclude, Room: room, Now: now, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			per := map[string]int{}
			for _, c := range got {
				per[c.Host]++
			}
			if fmt.Sprint(per) != fmt.Sprint(tc.want) {
				t.Errorf("claimed %v, want %v", per, tc.want)
			}
		})
	}
}
