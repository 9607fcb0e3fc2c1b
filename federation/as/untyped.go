package as

import "encoding/json"

// Untyped is o as the generic JSON map that code not yet moved to the
// typed document reads (package timeline, which the client API's merge
// brought in written against maps): nil for a nil o. It costs one encode
// and one decode; move a reader onto *Object rather than add callers.
func Untyped(o *Object) map[string]any {
	if o == nil {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
