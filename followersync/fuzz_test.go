package followersync

import "testing"

// FuzzParseHeader: the Collection-Synchronization header comes from any
// signed sender; parsing it must never panic, and what it accepts must
// round-trip through the header Herald sends.
func FuzzParseHeader(f *testing.F) {
	f.Add(`collectionId="https://a.example/users/x/followers", url="https://a.example/users/x/followers_synchronization", digest="b08ab6951c7d6cc2b91e17ebd9557da7fae02489728e9332fcb3a97748244d50"`)
	f.Add(`collectionId=x,url="y",digest=""`)
	f.Add(`digest="\"`)
	f.Fuzz(func(t *testing.T, v string) {
		h, err := ParseHeader(v)
		if err != nil {
			return
		}
		again, err := ParseHeader(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parsed to %+v, which does not round-trip: %+v %v", v, h, again, err)
		}
	})
}
