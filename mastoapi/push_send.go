package mastoapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"

	"herald/push"
	"herald/store"
)

// pushTitles are the titles of Mastodon's push messages
// (config/locales/en.yml, notification_mailer.TYPE.subject, which its
// Web::NotificationSerializer uses), %s the account's name.
var pushTitles = map[string]string{
	"mention":        "%s mentioned you",
	"status":         "%s just posted",
	"reblog":         "%s boosted your post",
	"follow":         "%s is now following you",
	"follow_request": "Pending follower: %s",
	"favourite":      "%s favorited your post",
	"poll":           "A poll you voted in has ended",
	"update":         "%s edited a post",
	"quote":          "%s quoted your post",
	"quoted_update":  "%s edited a post you have quoted",
	// Held interactions (timeline/held.go), awaiting the author.
	"pending.favourite": "%s wants to favorite your post",
	"pending.reply":     "%s wants to reply to your post",
	"pending.reblog":    "%s wants to boost your post",
	"pending.quote":     "%s wants to quote your post",
}

// pushMessage is the payload of a push, Mastodon's Web::NotificationSerializer:
// what an app's service worker shows without asking the server.
type pushMessage struct {
	AccessToken      string `json:"access_token"`
	PreferredLocale  string `json:"preferred_locale"`
	NotificationID   string `json:"notification_id"`
	NotificationType string `json:"notification_type"`
	Icon             string `json:"icon"`
	Title            string `json:"title"`
	Body             string `json:"body"`
}

// SendPush sends a local actor's notification to each of its push
// subscriptions that wants it (its alerts, its policy): the function the
// job runner calls for a push job (store.QueuePush). A subscription the
// push service says is gone is forgotten; another failure is returned
// once every subscription was tried.
func (h *Handler) SendPush(ctx context.Context, actorID, notificationID int64) error {
	n, err := h.DB.NotificationByID(ctx, actorID, notificationID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // dismissed, or its account gone: nothing to say
	}
	if err != nil {
		return err
	}
	subs, err := h.DB.PushSubscriptions(ctx, actorID)
	if err != nil || len(subs) == 0 {
		return err
	}
	viewer, err := h.DB.ActorByID(ctx, actorID)
	if err != nil {
		return err
	}
	rel, err := h.DB.Relations(ctx, actorID, []string{n.Account})
	if err != nil {
		return err
	}
	payload, err := h.pushPayload(ctx, viewer, n)
	if err != nil || payload == nil {
		return err
	}
	key, err := h.vapid(ctx)
	if err != nil {
		return err
	}
	var failed error
	for _, s := range subs {
		if !s.Wants(n.Type) || !pushAllowed(s.Policy, rel[n.Account]) {
			continue
		}
		m := push.Message{Endpoint: s.Endpoint, Keys: push.Keys{P256DH: s.P256DH, Auth: s.Auth}, Payload: payload}
		err := push.Send(ctx, h.Fetcher.Client, key, h.Instance.Base(), m, h.Now())
		for _, wait := range pushRetries() {
			if !push.Retryable(err) || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
				err = push.Send(ctx, h.Fetcher.Client, key, h.Instance.Base(), m, h.Now())
			}
		}
		switch {
		case errors.Is(err, push.ErrGone):
			if err := h.DB.RemovePushSubscription(ctx, s.ID); err != nil {
				return err
			}
		case err != nil && failed == nil:
			failed = err
		}
	}
	return failed
}

// pushRetry is the wait before the first retry of a push the service
// could not take (429, 5xx, unreachable), in nanoseconds (0: 2 s); the
// second waits twice as long. The job's minute bounds them all.
var pushRetry atomic.Int64

// pushRetries are the waits before each retry.
func pushRetries() []time.Duration {
	d := time.Duration(pushRetry.Load())
	if d <= 0 {
		d = 2 * time.Second
	}
	return []time.Duration{d, 2 * d}
}

// pushAllowed applies a subscription's policy to the relation with the
// notification's account.
func pushAllowed(policy string, r *store.Relation) bool {
	switch policy {
	case "none":
		return false
	case "followed":
		return r != nil && r.Following
	case "follower":
		return r != nil && r.FollowedBy
	}
	return true
}

// pushPayload is the JSON a notification pushes, nil when it cannot be
// shown (its account or status gone). Herald keeps only hashes of access
// tokens, so access_token is empty where Mastodon puts the token; apps
// fetch the notification with their own.
func (h *Handler) pushPayload(ctx context.Context, viewer *store.Actor, n *store.Notification) ([]byte, error) {
	list, err := h.RenderNotifications(ctx, viewer, []*store.Notification{n})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	e := list[0]
	name := e.Account.DisplayName
	if name == "" {
		name = e.Account.Username
	}
	title := pushTitles[e.Type]
	if title == "" {
		title = "New notification from %s"
	}
	body := ""
	if e.Status != nil {
		body = e.Status.SpoilerText
		if body == "" {
			body = plainText(e.Status.Content)
		}
	} else if e.Type == "follow" || e.Type == "follow_request" {
		body = plainText(e.Account.Note)
	}
	m := pushMessage{PreferredLocale: "en", NotificationID: e.ID, NotificationType: e.Type, Icon: e.Account.AvatarStatic,
		Title: strings.ReplaceAll(title, "%s", name), Body: truncate(body, 140)}
	return json.Marshal(m)
}

// plainText is the text of an HTML fragment, paragraphs and line breaks
// as new lines.
func plainText(s string) string {
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			if name, _ := z.TagName(); string(name) == "br" || string(name) == "p" && b.Len() > 0 {
				b.WriteByte('\n')
			}
		}
	}
}

// truncate cuts s to n characters, with an ellipsis, as Rails' truncate.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
