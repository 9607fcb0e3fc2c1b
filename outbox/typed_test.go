package outbox_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"herald/internal/fedtest"
)

// TestAppDocumentDeliveredAsWritten: what an app posts reaches the
// follower's server with every property Herald does not read exactly as
// the app wrote it (nulls, one-element arrays, nested objects of its own
// types, several types), and the ones it reads in their own shape: the
// outbox parses the document once (federation/as) and writes it back
// without reshaping it.
func TestAppDocumentDeliveredAsWritten(t *testing.T) {
	h := fedtest.NewHerald(t)
	r := fedtest.NewRemote(t, "127.0.7.39")
	follow(t, h, r.Actor(t, "bob"))
	doc := `{"@context":["https://www.w3.org/ns/activitystreams",{"trails":"https://trails.example/ns#","Route":"trails:Route"}],` +
		`"type":["Route","Note"],"name":"Around the lake","to":["https://www.w3.org/ns/activitystreams#Public"],` +
		`"surface":["gravel"],"closed":null,"waypoints":[{"type":"Place","name":"Pier","elevation":null,"tags":[]}],"rating":{"stars":4,"by":["x"]}}`
	if res, act := post(t, h, h.Token, json.RawMessage(doc)); res.StatusCode != 201 {
		t.Fatalf("publish: %d %v", res.StatusCode, act)
	}
	h.Step(t)
	var want map[string]any
	if err := json.Unmarshal([]byte(`{"surface":["gravel"],"closed":null,"waypoints":[{"type":"Place","name":"Pier","elevation":null,"tags":[]}],"rating":{"stars":4,"by":["x"]}}`), &want); err != nil {
		t.Fatal(err)
	}
	var create map[string]any
	for _, rec := range r.Received() {
		if rec.Doc["type"] == "Create" {
			create = rec.Doc
		}
	}
	if create == nil {
		t.Fatalf("no Create delivered: %v", r.Received())
	}
	obj, _ := create["object"].(map[string]any)
	for name, v := range want {
		if !reflect.DeepEqual(obj[name], v) {
			t.Errorf("%s delivered as %#v, the app wrote %#v", name, obj[name], v)
		}
	}
	if _, ok := obj["closed"]; !ok {
		t.Error("the null the app wrote was dropped")
	}
	if !reflect.DeepEqual(obj["type"], []any{"Route", "Note"}) || !reflect.DeepEqual(obj["to"], []any{"https://www.w3.org/ns/activitystreams#Public"}) {
		t.Errorf("type and to delivered as %#v, %#v", obj["type"], obj["to"])
	}
}
