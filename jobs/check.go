package jobs

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"herald/host"
	"herald/store"
	"herald/webfinger"
)

// The checks of what an operator typed, before a job is submitted: the CLI
// and the console run the same ones, so a value one refuses the other
// refuses too, and a bad value never leaves a job behind. Each returns what
// is wrong in a few words; the caller names the flag or the field.

// CheckTarget accepts what the runner can resolve: @user@host, user@host
// or an http(s) actor URL. Only the form is checked; the server does the
// lookup.
func CheckTarget(target string) error {
	if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
		return nil
	}
	if _, _, err := webfinger.ParseHandle(target); err != nil {
		return errors.New("want @user@host or an actor URL")
	}
	return nil
}

// CheckRelayURL accepts an absolute http(s) URL without a fragment: a
// relay's inbox or its actor.
func CheckRelayURL(s string) error {
	u, err := url.Parse(s)
	if err == nil {
		_, err = host.FromURL(u) // http(s), and a host that reads as one
	}
	if err != nil || u.Fragment != "" {
		return errors.New("want the relay's inbox (https://relay.example/inbox) or its actor (https://relay.example/actor)")
	}
	return nil
}

// RelayStyles are the styles relay add accepts ("" detects it).
var RelayStyles = []string{store.RelayMastodon, store.RelayLitePub}

// CheckRelayStyle accepts "" (detect), mastodon or litepub.
func CheckRelayStyle(style string) error {
	if style != "" && style != store.RelayMastodon && style != store.RelayLitePub {
		return errors.New("want mastodon or litepub")
	}
	return nil
}

// Profile limits, Mastodon's (app/models/account.rb: DEFAULT_FIELDS_SIZE,
// and 255 characters a field name or value).
const (
	MaxFields     = 4
	MaxFieldChars = 255
)

// CheckField checks one profile field's name and value.
func CheckField(f store.ProfileField) error {
	if f.Name == "" {
		return errors.New("a field needs a name")
	}
	if utf8.RuneCountInString(f.Name) > MaxFieldChars || utf8.RuneCountInString(f.Value) > MaxFieldChars {
		return fmt.Errorf("a field's name and value have at most %d characters each", MaxFieldChars)
	}
	return nil
}

// CheckImageURL accepts an http(s) URL or "" (no image).
func CheckImageURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
		return errors.New("want an http(s) URL of an image")
	}
	return nil
}
