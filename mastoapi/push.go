package mastoapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"herald/push"
	"herald/store"
)

// Web Push subscriptions, as Mastodon's Api::V1::Push::SubscriptionsController
// serves them: one per access token, the push scope, alerts per
// notification type and a policy.

// pushAlerts are the alert types of Mastodon's Web::PushSubscription, in
// the order its entity lists them, then GoToSocial's of held interactions
// (apimodel.WebPushSubscriptionAlerts: pending.favourite, pending.reply,
// pending.reblog) and Herald's of a held quote (timeline/held.go).
var pushAlerts = []string{"mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update",
	"admin.sign_up", "admin.report", "quote", "quoted_update", "pending.favourite", "pending.reply", "pending.reblog", "pending.quote"}

// pushPolicies are who a subscription takes pushes from: everyone,
// accounts followed, followers, nobody.
var pushPolicies = []string{"all", "followed", "follower", "none"}

// PushSubscription is Mastodon's WebPushSubscription entity.
type PushSubscription struct {
	ID        string          `json:"id"`
	Endpoint  string          `json:"endpoint"`
	Standard  bool            `json:"standard"`
	Alerts    map[string]bool `json:"alerts"`
	Policy    string          `json:"policy"`
	ServerKey string          `json:"server_key"`
}

// vapidKey is the instance's VAPID key pair, read (or made) once.
type vapidKey struct {
	mu  sync.Mutex
	key *push.VAPID
}

// vapid returns the instance's VAPID key pair, making it the first time
// any process needs it (store.VAPIDKey keeps the first one stored).
func (h *Handler) vapid(ctx context.Context) (*push.VAPID, error) {
	v := &h.streams.vapid
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.key != nil {
		return v.key, nil
	}
	priv, _, err := h.DB.VAPIDKey(ctx, func() ([]byte, string, error) {
		k, err := push.NewVAPID()
		if err != nil {
			return nil, "", err
		}
		return k.Private(), k.PublicKey(), nil
	})
	if err != nil {
		return nil, err
	}
	if v.key, err = push.ParseVAPID(priv); err != nil {
		return nil, err
	}
	return v.key, nil
}

// vapidPublicKey is the public key apps are shown (the instance's
// vapid.public_key, an app's vapid_key); "" if it cannot be read.
func (h *Handler) vapidPublicKey(ctx context.Context) string {
	k, err := h.vapid(ctx)
	if err != nil {
		h.Logger.Error("client API: could not read the VAPID key", "err", err)
		return ""
	}
	return k.PublicKey()
}

// pushEntity renders a subscription.
func (h *Handler) pushEntity(ctx context.Context, s *store.PushSubscription) PushSubscription {
	e := PushSubscription{ID: ID(s.ID), Endpoint: s.Endpoint, Standard: s.Standard, Alerts: map[string]bool{}, Policy: s.Policy,
		ServerKey: h.vapidPublicKey(ctx)}
	for _, a := range pushAlerts {
		e.Alerts[a] = s.Wants(a)
	}
	return e
}

// pushKey decodes a key as browsers write them (URL-safe base64, padded
// or not) or in standard base64.
func pushKey(s string) []byte {
	s = strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(strings.TrimSpace(s)), "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// pushData reads data[alerts][TYPE] and data[policy] onto s (a type not
// named keeps its value, false for a new subscription).
func pushData(c *Call, s *store.PushSubscription) error {
	var alerts []string
	for _, a := range pushAlerts {
		on, set := c.Params.Bool("data[alerts][" + a + "]")
		if !set {
			on = s.Wants(a)
		}
		if on {
			alerts = append(alerts, a)
		}
	}
	s.Alerts = alerts
	if p := c.Params.Get("data[policy]"); p != "" {
		ok := false
		for _, known := range pushPolicies {
			ok = ok || p == known
		}
		if !ok {
			return Errorf(http.StatusUnprocessableEntity, "Validation failed: Policy is not included in the list")
		}
		s.Policy = p
	}
	if s.Policy == "" {
		s.Policy = "all"
	}
	return nil
}

// createPush serves POST /api/v1/push/subscription: the token's
// subscription, replacing the one it had.
func (h *Handler) createPush(c *Call) error {
	endpoint := c.Params.Get("subscription[endpoint]")
	p256dh, auth := c.Params.Get("subscription[keys][p256dh]"), c.Params.Get("subscription[keys][auth]")
	if endpoint == "" || p256dh == "" || auth == "" {
		return Errorf(http.StatusBadRequest, "param is missing or the value is empty: subscription")
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(endpoint) > maxURI {
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Endpoint is invalid")
	}
	keys := push.Keys{P256DH: pushKey(p256dh), Auth: pushKey(auth)}
	if err := keys.Check(); err != nil {
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: "+err.Error())
	}
	standard, _ := c.Params.Bool("subscription[standard]")
	s := &store.PushSubscription{TokenID: c.Token.ID, ActorID: c.Actor.ID, Endpoint: endpoint, P256DH: keys.P256DH, Auth: keys.Auth,
		Standard: standard, Created: h.Now()}
	if err := pushData(c, s); err != nil {
		return err
	}
	if err := h.DB.SetPushSubscription(c.Ctx(), s); err != nil {
		return err
	}
	return c.JSON(h.pushEntity(c.Ctx(), s))
}

// callerPush is the token's subscription, or 404.
func (h *Handler) callerPush(c *Call) (*store.PushSubscription, error) {
	s, err := h.DB.PushSubscriptionOf(c.Ctx(), c.Token.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	return s, err
}

// getPush serves GET /api/v1/push/subscription.
func (h *Handler) getPush(c *Call) error {
	s, err := h.callerPush(c)
	if err != nil {
		return err
	}
	return c.JSON(h.pushEntity(c.Ctx(), s))
}

// updatePush serves PUT /api/v1/push/subscription: its alerts and policy.
func (h *Handler) updatePush(c *Call) error {
	s, err := h.callerPush(c)
	if err != nil {
		return err
	}
	if err := pushData(c, s); err != nil {
		return err
	}
	if err := h.DB.UpdatePushAlerts(c.Ctx(), s.ID, s.Alerts, s.Policy); err != nil {
		return err
	}
	return c.JSON(h.pushEntity(c.Ctx(), s))
}

// deletePush serves DELETE /api/v1/push/subscription: {} whether there was
// one or not, as Mastodon answers.
func (h *Handler) deletePush(c *Call) error {
	s, err := h.DB.PushSubscriptionOf(c.Ctx(), c.Token.ID)
	if err == nil {
		err = h.DB.RemovePushSubscription(c.Ctx(), s.ID)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return c.JSON(map[string]any{})
}
