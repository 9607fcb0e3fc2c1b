package mastoapi_test

import (
	"fmt"
	"testing"
)

// TestRemoteAttachmentIDs: every attachment of a remote status gets an id
// of its own, past ten too (the eleventh once shared the first's), and two
// statuses' attachments never share one; each keeps its file.
func TestRemoteAttachmentIDs(t *testing.T) {
	w := newWorld(t, "127.0.29.7")
	for _, n := range []string{"1", "2"} {
		var files []any
		for i := range 12 {
			files = append(files, map[string]any{"type": "Document", "mediaType": "image/png",
				"url": fmt.Sprintf("%s/media/%s-%d.png", w.r.URL, n, i), "name": fmt.Sprint("picture ", i)})
		}
		w.deliver(t, "Create", w.note(w.bob, n, "twelve pictures", "attachment", files))
	}
	home := statuses(t, w.h, w.tok, "/api/v1/timelines/home")
	if len(home) != 2 {
		t.Fatalf("home: %d statuses, want 2", len(home))
	}
	seen := map[string]string{}
	for _, st := range home {
		if len(st.MediaAttachments) != 12 {
			t.Fatalf("status %s: %d attachments, want 12", st.ID, len(st.MediaAttachments))
		}
		for _, a := range st.MediaAttachments {
			if prev, dup := seen[a.ID]; dup {
				t.Errorf("attachment id %s of %s is also %s's", a.ID, *a.RemoteURL, prev)
			}
			seen[a.ID] = *a.RemoteURL
		}
	}
}
