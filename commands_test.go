package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"herald/federation"
	"herald/federation/signature"
	"herald/internal/fedtest"
	"herald/store"
)

// herald runs the binary in dir (where herald.db is) with no flags but
// args, as docs/operating.md tells an operator to.
func herald(t *testing.T, bin, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestPublishingCommandsAgreeWithTheServer: the server is started with a
// domain; then every publishing command runs without a flag (in the
// database's folder), and every activity that reaches the remote server
// carries an id on that domain, an actor on it, a signature by that actor's
// key that verifies, and a report that says it arrived.
func TestPublishingCommandsAgreeWithTheServer(t *testing.T) {
	bin := buildHerald(t)
	dir := t.TempDir()
	const domain = "social.localhost"
	base := "http://" + domain
	srv := startProcess(t, bin, "serve", "--domain", domain, "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "herald.db"), "--allow-private-network")
	if srv.Base != base {
		t.Fatalf("serve says %s, want %s", srv.Base, base)
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := herald(t, bin, dir, args...)
		if err != nil {
			t.Fatalf("herald %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	if out := must("actor", "add", "alice"); !strings.Contains(out, "actor: "+base+"/users/alice") {
		t.Fatalf("actor add: %s", out)
	}
	must("actor", "add", "dora", "--manual-approval")

	remote := fedtest.NewRemote(t, "127.0.9.1")
	bob := remote.Actor(t, "bob")
	remote.Actor(t, "carol")
	handle := func(name string) string { return "@" + name + "@" + remote.Host }
	// bob follows alice (accepted at once) and dora (who approves by hand),
	// with real signed Follows.
	for _, name := range []string{"alice", "dora"} {
		body, _ := json.Marshal(fedtest.Activity(bob, "Follow", base+"/users/"+name))
		req := fedtest.SignedPost(t, "http://"+srv.Addr+"/users/"+name+"/inbox", body, bob, signature.Cavage, time.Now())
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusAccepted {
			t.Fatalf("follow %s: %v %v", name, res, err)
		}
		res.Body.Close()
	}

	post := must("post", "--as", "alice", "Hello, fediverse")
	createID := lineValue(post, "Create ")
	objectID := lineValue(post, "object: ")
	must("post", "--as", "alice", "--to", handle("bob"), "psst")
	bobNote := remote.URL + "/notes/1"
	remote.Serve("/notes/1", map[string]any{"@context": federation.ContextAS, "id": bobNote, "type": "Note", "attributedTo": bob.ID, "content": "hi"})
	must("post", "--as", "alice", "--reply-to", bobNote, "--cw", "spoilers", "--lang", "en", "the butler did it")
	must("pin", objectID)
	img := filepath.Join(dir, "strip.png")
	writePNG(t, img)
	must("post", "--as", "alice", "--attach", img, "--alt", "a blue strip", "with a picture")
	must("actor", "edit", "alice", "--field", "Site=https://alice.example/", "--avatar", "https://img.example/a.png")
	must("follow", "--as", "alice", handle("carol"))
	must("unfollow", "--as", "alice", handle("carol"))
	must("delete", objectID)
	must("follows", "approve", "dora", bob.ID)
	must("actor", "delete", "dora", "--yes")

	want := map[string]int{"Accept": 2, "Create": 4, "Follow": 1, "Undo": 1, "Delete": 2, "Add": 1, "Update": 1}
	got := waitReceived(t, remote, 12)
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	replies, pictures := 0, 0
	for _, rec := range got {
		typ, _ := rec.Doc["type"].(string)
		want[typ]--
		if checkShape(t, rec.Doc, bobNote, bob.ID) {
			replies++
		}
		if obj, _ := rec.Doc["object"].(map[string]any); typ == "Create" && obj["attachment"] != nil {
			pictures++
		}
		id, _ := rec.Doc["id"].(string)
		actor, _ := rec.Doc["actor"].(string)
		name, ok := strings.CutPrefix(actor, base+"/users/")
		if !ok || !strings.HasPrefix(id, actor+"/") {
			t.Errorf("%s: id %q, actor %q: not on %s", typ, id, actor, base)
			continue
		}
		if rec.KeyID != actor+"#main-key" {
			t.Errorf("%s %s signed by %q, not its actor", typ, id, rec.KeyID)
		}
		a, err := db.ActorByNameWithDeleted(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := federation.ParsePublicKeyPEM(a.PublicKeyPEM)
		s, err := signature.Parse(rec.Request(), rec.Body, signature.Options{Scheme: "http"})
		if err == nil {
			err = s.Verify(pub)
		}
		if err != nil {
			t.Errorf("%s %s: signature: %v", typ, id, err)
		}
	}
	if pictures != 1 {
		t.Errorf("%d posts with an attachment arrived, want 1", pictures)
	}
	if replies != 1 {
		t.Errorf("%d replies to %s arrived, want 1", replies, bobNote)
	}
	for typ, n := range want {
		if n != 0 {
			t.Errorf("%s: %d more or fewer than expected", typ, n)
		}
	}
	// The report agrees: delivered.
	waitFor(t, func() bool { return strings.Contains(must("deliveries", createID), "delivered to 1 of 1 servers") })
}

// checkShape checks what the commands' flags put into what was sent: the
// reply's threading, content warning, language and mention, the pin's
// target and the profile's field.
// It reports whether doc was the reply.
func checkShape(t *testing.T, doc map[string]any, bobNote, bobID string) (reply bool) {
	t.Helper()
	obj, _ := doc["object"].(map[string]any)
	switch doc["type"] {
	case "Create":
		if to := fmt.Sprint(doc["to"]); to == "["+bobID+"]" {
			// The direct message mentions its recipient.
			if b, _ := json.Marshal(obj); !strings.Contains(string(b), `"type":"Mention"`) || !strings.Contains(string(b), `h-card`) {
				t.Errorf("direct message without a mention: %s", b)
			}
		}
		if atts, _ := obj["attachment"].([]any); len(atts) == 1 {
			a, _ := atts[0].(map[string]any)
			if a["name"] != "a blue strip" || a["mediaType"] != "image/png" || a["width"] != 16.0 || a["blurhash"] == nil {
				t.Errorf("attachment %v", a)
			}
		}
		if obj["inReplyTo"] != bobNote {
			return false
		}
		reply = true
		b, _ := json.Marshal(doc)
		for _, want := range []string{`"summary":"spoilers"`, `"sensitive":true`, `"contentMap":{"en":"\u003cp\u003ethe butler did it\u003c/p\u003e"}`,
			`{"href":"` + bobID + `","name":"@bob@`, `"cc":["` + doc["actor"].(string) + `/followers","` + bobID + `"]`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("reply lacks %s: %s", want, b)
			}
		}
	case "Add":
		if doc["target"] != doc["actor"].(string)+"/collections/featured" {
			t.Errorf("Add target %v", doc["target"])
		}
	case "Update":
		b, _ := json.Marshal(obj)
		if !strings.Contains(string(b), `"name":"Site"`) || !strings.Contains(string(b), "https://img.example/a.png") {
			t.Errorf("Update of the actor: %s", b)
		}
	}
	return reply
}

// TestSignalsAndASecondServe: SIGHUP reloads (the log level from the
// database) and never stops the server; a second serve on the same file
// refuses with the first one's pid; SIGTERM stops it cleanly.
func TestSignalsAndASecondServe(t *testing.T) {
	bin := buildHerald(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "herald.db")
	p := startProcess(t, bin, "serve", "--listen", "127.0.0.1:0", "--db", db)
	out, err := herald(t, bin, dir, "serve", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, fmt.Sprintf("another herald serve (pid %d", p.cmd.Process.Pid)) {
		t.Errorf("second serve: %v %s", err, out)
	}
	if code := exitCode(err); code != 1 {
		t.Errorf("second serve exit %d", code)
	}
	if out, err := herald(t, bin, dir, "log-level", "debug"); err != nil {
		t.Fatal(out)
	}
	waitFor(t, func() bool { return strings.Contains(p.errs.String(), "log level changed") })
	for i := 0; i < 3; i++ {
		p.cmd.Process.Signal(syscall.SIGHUP)
		waitFor(t, func() bool { return strings.Count(p.errs.String(), "SIGHUP: reloading") > i })
	}
	if !p.healthy() {
		t.Fatalf("not serving after SIGHUP: %s", p.errs.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("SIGTERM: exit %d: %s", code, p.errs.String())
	}
}

// exitCode is the exit status an exec error carries (0 for none).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
