package timeline

import (
	"herald/store"
)

// The events the streaming API tells apps of (Mastodon's event names):
// a status in a timeline, a notification, a status deleted, a status
// edited, a direct conversation's news. Each is recorded with the change
// that caused it (store.APIEvent), for one local actor's stream (user,
// direct, list) or for a public one (public, public:local,
// public:remote, hashtag).

// event records one event.
func (w *writer) event(actorID int64, stream, event string, statusID, notificationID int64, detail string) error {
	return w.tx.AddAPIEvent(w.ctx, store.APIEvent{ActorID: actorID, Stream: stream, Event: event, StatusID: statusID,
		NotificationID: notificationID, Detail: detail, CreatedAt: w.now})
}

// publicEvents tells the public streams of a new public status (and the
// hashtag streams of its tags): public, and public:local or public:remote.
func (w *writer) publicEvents(s *store.Status, tags []string) error {
	return w.onPublic(s, "update", tags)
}

// onPublic records event on the public streams a status is on: public
// and public:local or public:remote (not for a reply to someone else),
// and the hashtag streams of its tags.
func (w *writer) onPublic(s *store.Status, event string, tags []string) error {
	if s.Visibility != "public" || s.ReblogIRI != "" {
		return nil
	}
	if !s.Reply {
		side := "public:remote"
		if s.LocalActorID != 0 {
			side = "public:local"
		}
		for _, stream := range []string{"public", side} {
			if err := w.event(0, stream, event, s.ID, 0, ""); err != nil {
				return err
			}
		}
	}
	for _, t := range tags {
		if err := w.event(0, "hashtag", event, s.ID, 0, t); err != nil {
			return err
		}
	}
	return nil
}

// statusEvents tells everyone who has a status of a change (status.update):
// the local actors whose home feed holds it and the public streams.
func (w *writer) statusEvents(s *store.Status, event string) error {
	holders, err := w.tx.HomeHolders(w.ctx, s.ID)
	if err != nil {
		return err
	}
	for _, id := range holders {
		if err := w.event(id, "user", event, s.ID, 0, ""); err != nil {
			return err
		}
	}
	tags, err := w.tx.StatusTagsOf(w.ctx, s.ID)
	if err != nil {
		return err
	}
	return w.onPublic(s, event, tags)
}

// deleteEvents tells the holders of a deleted status and the public
// streams it was on.
func (w *writer) deleteEvents(s *store.Status, holders []int64) error {
	for _, id := range holders {
		if err := w.event(id, "user", "delete", s.ID, 0, ""); err != nil {
			return err
		}
	}
	return w.onPublic(s, "delete", nil)
}
