// Package push sends Web Push messages (RFC 8030) as Mastodon does for its
// push subscriptions: the payload encrypted for the subscriber's browser or
// app (RFC 8291, aes128gcm content coding of RFC 8188, encrypt.go), the
// request authorized by the instance's VAPID key (RFC 8292, vapid.go), and
// the POST to the push service's endpoint through the node's guarded
// client (send.go), since an endpoint is a URL someone else gave.
//
// The client API (mastoapi/push*.go) keeps the subscriptions and decides
// what a notification says; the node's job runner calls Send for each one.
package push
