package inbox

import "herald/timeline"

// forTimeline is the activity as package timeline applies it to the
// statuses, home feeds and notifications of the client API (dispatch).
func (a *activity) forTimeline() timeline.Inbound {
	return timeline.Inbound{ID: a.id, Type: a.typ, Actor: a.actor, ObjectID: a.objectID, Doc: a.doc, Object: a.object, Now: a.now}
}
