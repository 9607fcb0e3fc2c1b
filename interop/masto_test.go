package interop

import (
	"bufio"
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"herald/internal/storetest"
	"herald/store"
)

// TestMastoJS drives Herald's Mastodon client API with masto.js, a real
// client library from the npm registry (interop/masto/flow.mjs): it
// registers an app, logs in through the authorize page with and without
// PKCE and out of band, verifies its credentials, updates them with an
// avatar, looks up and follows the Fedify peer (found through WebFinger),
// sees the peer among its followers, loads what apps load at start, and a
// token without write is refused (403). Every answer masto.js got, through
// a recording proxy, is checked against the Mastodon API's OpenAPI
// description (abraham/mastodon-openapi) with kin-openapi.
func TestMastoJS(t *testing.T) {
	RequireMasto(t)
	schema := MastodonSchemaPath(t)
	if schema == "" {
		msg := "interop: the Mastodon API's OpenAPI description is missing: put abraham/mastodon-openapi's dist/schema.json (and its LICENSE) at testdata/mastodon-openapi/ or shared/mastodon-openapi/, or name it in HERALD_MASTODON_OPENAPI"
		if os.Getenv("HERALD_OPENAPI") == "require" {
			t.Fatal(msg)
		}
		t.Log(msg + "; the answers are not validated")
	}
	p := StartPeer(t, PeerOptions{})
	h := StartHerald(t, "alice")
	const password = "a password for masto.js"
	cmd := exec.Command(h.bin, "actor", "password", "alice", "--stdin", "--db", h.DBPath)
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("herald actor password: %v\n%s", err, out)
	}
	followAccepted(t, h, p, "alice")

	avatar := filepath.Join(t.TempDir(), "avatar.png")
	writePNG(t, avatar)
	rec := NewRecorder(t, h.URL)
	peerAcct := "peer@" + strings.TrimPrefix(p.URL, "http://")
	run := exec.Command(MastoNode(t), "flow.mjs")
	run.Dir = MastoDir(t)
	run.Env = append(os.Environ(), "HERALD_URL="+rec.URL, "HERALD_USER=alice", "HERALD_PASSWORD="+password, "PEER_ACCT="+peerAcct, "AVATAR="+avatar)
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	done := make(chan error, 1)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- run.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("masto.js flow: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		run.Process.Kill()
		t.Fatalf("masto.js flow did not finish in 2 minutes:\n%s", out.String())
	}
	flow := out.String()
	sc := bufio.NewScanner(strings.NewReader(flow))
	steps := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "ok ") {
			steps++
		}
		t.Log(sc.Text())
	}
	if !strings.Contains(flow, "\ndone") || steps < 15 {
		t.Errorf("the flow stopped after %d steps", steps)
	}
	if n := storetest.Count(t, h.DB(t).AllFollowing, func(g store.Following) bool { return g.Target == p.ActorID }); n != 1 {
		t.Errorf("Herald's following rows for the peer: %d", n)
	}
	if strings.Contains(h.Log(t), password) {
		t.Error("the password reached Herald's log")
	}

	if schema == "" {
		return
	}
	v := NewSchemaValidator(t, schema, h.URL)
	validated := 0
	var outside []string
	for _, e := range rec.Exchanges() {
		err := v.Validate(e)
		switch {
		case errors.Is(err, ErrNotDescribed):
			outside = append(outside, e.describe())
		case err != nil:
			t.Errorf("%s does not match the Mastodon API's description:\n%v\n%s", e.describe(), err, tail(e.Body, 1500))
		default:
			validated++
		}
	}
	t.Logf("%d answers validated against %s; not in the description: %v", validated, filepath.Base(schema), outside)
	if validated < 20 {
		t.Errorf("only %d answers were validated", validated)
	}
}

func writePNG(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}
