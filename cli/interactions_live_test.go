package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/internal/storetest"
	"herald/store"
)

// TestCLIInteractions: with a server running, herald interactions lists
// the requests held for alice's post, and approve and reject decide them
// through the server: the Accept of the held Like and the Reject of the
// held QuoteRequest are queued for bob's inbox. Deciding one again, an
// unknown one, or a bad id fails with the exit codes of other commands.
func TestCLIInteractions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	posted := mustCLI(t, "post", "--as", "alice", "ask first", "--db", path)
	post := regexp.MustCompile(`object: (\S+)`).FindStringSubmatch(posted)
	if post == nil {
		t.Fatalf("post printed no object: %q", posted)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, err := db.ObjectByIRI(ctx, post[1])
	if err != nil {
		t.Fatal(err)
	}
	remote := fedtest.NewRemote(t, "127.0.33.1").Actor(t, "bob")
	bob := remote.ID
	hold := func(kind, interaction string, body map[string]any) int64 {
		b, _ := json.Marshal(body)
		r := &store.InteractionRequest{ObjectID: o.ID, Kind: kind, Interaction: interaction, Actor: bob, Body: string(b),
			State: store.InteractionPending, CreatedAt: time.Now()}
		if _, err := db.AddInteractionRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	like := hold("canLike", bob+"/likes/1", map[string]any{"id": bob + "/likes/1", "type": "Like", "actor": bob, "object": post[1]})
	quote := hold("canQuote", bob+"/statuses/1", map[string]any{"id": bob + "/quote_requests/1", "type": "QuoteRequest", "actor": bob,
		"object": post[1], "instrument": bob + "/statuses/1"})
	ids := map[int64]string{like: strconv.FormatInt(like, 10), quote: strconv.FormatInt(quote, 10)}

	for _, args := range [][]string{{"interactions"}, {"interactions", "alice"}} {
		list := mustCLI(t, append(args, "--db", path)...)
		for id, kind := range map[int64]string{like: "canLike", quote: "canQuote"} {
			if !regexp.MustCompile(`(?m)^` + ids[id] + `\s+alice\s+` + kind + `\s+` + regexp.QuoteMeta(bob) + `\s+` + regexp.QuoteMeta(post[1])).MatchString(list) {
				t.Errorf("%v does not list request %d:\n%s", args, id, list)
			}
		}
	}
	if out := mustCLI(t, "interactions", "approve", ids[like], "--db", path); !strings.Contains(out, "approved interaction request "+ids[like]) ||
		!strings.Contains(out, "the Accept is queued") {
		t.Errorf("approve: %q", out)
	}
	if out := mustCLI(t, "interactions", "reject", ids[quote], "--db", path); !strings.Contains(out, "the Reject is queued") {
		t.Errorf("reject: %q", out)
	}
	if list := mustCLI(t, "interactions", "--db", path); strings.Contains(list, "alice") {
		t.Errorf("decided requests still listed:\n%s", list)
	}
	answers := map[string]bool{}
	for _, d := range storetest.Deliveries(t, db) {
		if d.Inbox == remote.Inbox() {
			answers[d.Activity.Type] = true
		}
	}
	if !answers["Accept"] || !answers["Reject"] {
		t.Errorf("answers queued for bob: %v", answers)
	}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"interactions", "approve", ids[like]}, 1, "was accepted already"},
		{[]string{"interactions", "reject", "999"}, 1, "no interaction request 999"},
		{[]string{"interactions", "approve", "one"}, 2, "invalid ID"},
		{[]string{"interactions", "nobody"}, 1, `no actor named "nobody"`},
	} {
		code, _, errOut := runCLI(t, nil, append(c.args, "--db", path)...)
		if code != c.code || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, errOut, c.code, c.err)
		}
	}
}
