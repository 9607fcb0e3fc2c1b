// Package compose turns what a person typed into the ActivityStreams fields
// of a Note, the way Mastodon does: the content HTML with its links, the
// Mention and Hashtag tags, and the actors the text addresses. Text does it
// for plain text (what `herald post` and most apps send); Sanitize cuts HTML
// an app sends down to the subset Mastodon accepts from other servers.
//
// The rules follow Mastodon's source, cited by file name: TextFormatter
// (app/lib/text_formatter.rb) for the HTML, Extractor (app/lib/extractor.rb)
// with twitter-text for finding entities, Account::MENTION_RE
// (app/models/account.rb), Tag::HASHTAG_RE (app/models/tag.rb),
// ProcessMentionsService (app/services/process_mentions_service.rb) and
// Sanitize::Config::MASTODON_STRICT (app/lib/sanitize_config.rb).
//
// The package does no I/O of its own: resolving a mention (WebFinger) and
// naming a tag page are functions the caller supplies.
package compose

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"herald/federation/as"
)

// MaxMentions is how many distinct accounts one post may mention; the rest
// are reported in Result.Unresolved with ErrTooManyMentions and not looked
// up, so one post cannot make the server do hundreds of WebFinger lookups.
// Mastodon has no such limit, but its 500-character posts hold about 40.
const MaxMentions = 50

var (
	// ErrTooManyMentions is the error of a mention past MaxMentions.
	ErrTooManyMentions = errors.New("compose: too many mentions in one post")
	// ErrInvalidMention is the error of a mention whose resolver returned an
	// actor id or profile URL that is not an absolute http(s) URL.
	ErrInvalidMention = errors.New("compose: resolver returned no usable actor id")
	// ErrLanguage is returned for a Draft.Language that is not a language tag.
	ErrLanguage = errors.New("compose: language is not a BCP 47 language tag")
)

// Mention is an account a handle resolved to.
type Mention struct {
	// ID is the actor's id: the Mention tag's href and a recipient.
	ID string
	// URL is the actor's profile page, which the content links to (its
	// WebFinger profile-page link or the actor's url); ID when empty.
	URL string
	// Username and Host name the account as its server does
	// (preferredUsername and the WebFinger subject's domain); Username is
	// shown in the content and both make the tag's "@user@host" name. When
	// empty, the handle as typed is used.
	Username, Host string
}

// Resolver finds the account a handle names. The handle is "user@host",
// with the host in lower case; a mention with no host is given the local
// domain. Any error leaves the mention as plain text and is reported in
// Result.Unresolved.
type Resolver func(ctx context.Context, handle string) (Mention, error)

// Options are the server's part of composing a post.
type Options struct {
	// LocalDomain is this server's domain: "@name" means "@name@LocalDomain".
	LocalDomain string
	// Resolve resolves mentions. When nil, no mention resolves.
	Resolve Resolver
	// TagURL returns the page of a hashtag, given its normalized name (see
	// NormalizeHashtag: lower case, may hold any letter, so escape it with
	// url.PathEscape). When nil, hashtags stay plain text and no Hashtag tags
	// are made.
	TagURL func(name string) string
}

// Draft is what the author gave.
type Draft struct {
	// Text is the post as typed, plain text.
	Text string
	// Summary is a content warning, plain text as Mastodon sends it. A
	// non-empty one makes the post sensitive.
	Summary string
	// InReplyTo is the id of the object this post answers.
	InReplyTo string
	// Language is a BCP 47 tag such as "en" or "pt-BR"; it adds contentMap.
	Language string
}

// Tag is an entry of a Note's "tag" array.
type Tag struct {
	Type string `json:"type"` // "Mention" or "Hashtag"
	Href string `json:"href"`
	Name string `json:"name"` // "@user@host" or "#name"
}

// Unresolved is a mention that stayed plain text, and why.
type Unresolved struct {
	Handle string // "user@host"
	Err    error
}

// Result is a composed post.
type Result struct {
	Content   string // the HTML of "content"
	Summary   string // "summary"; "" for none
	InReplyTo string
	Language  string // lower-case primary subtag; "" for none
	Tags      []Tag  // Mention tags, then Hashtag tags, in the order typed
	// Recipients are the ids of the mentioned actors, in the order typed,
	// each once. Mastodon puts them in "cc" of a public or unlisted post
	// and in "to" of a followers-only or direct one; which is the caller's.
	Recipients []string
	// Hashtags are the normalized names of the hashtags, each once.
	Hashtags []string
	// Unresolved lists the mentions that are plain text in Content; it is
	// for the caller to decide whether that is an error.
	Unresolved []Unresolved
}

// Text composes a plain-text draft. The content is what Mastodon's
// TextFormatter would make of it: the text trimmed, HTML-escaped, split into
// <p> paragraphs on blank lines with <br /> for single newlines; http and
// https URLs, hashtags and resolved mentions linked. A mention is resolved
// once per handle however often it is typed; unresolved ones stay as typed.
// The error is for a bad Draft.Language or a ctx that ended while mentions
// were being resolved (then nothing is returned, since a post composed with
// half its mentions would address the wrong people).
func Text(ctx context.Context, d Draft, o Options) (Result, error) {
	lang, err := language(d.Language)
	if err != nil {
		return Result{}, err
	}
	r := Result{
		Summary:   strings.TrimSpace(d.Summary),
		InReplyTo: d.InReplyTo,
		Language:  lang,
	}
	// Status#prepare_contents strips the text before it is formatted.
	text := strings.Trim(d.Text, " \t\n\v\f\r\x00")
	if text == "" {
		return r, nil
	}
	entities := extract(text)
	mentions, err := resolveMentions(ctx, entities, o, &r)
	if err != nil {
		return Result{}, err
	}

	var b strings.Builder
	last := 0
	seenTag := map[string]bool{}
	for _, e := range entities {
		b.WriteString(escape(text[last:e.start]))
		last = e.end
		switch e.kind {
		case entityURL:
			b.WriteString(linkURL(e.text))
		case entityHashtag:
			if o.TagURL == nil {
				b.WriteString(escape(text[e.start:e.end]))
				continue
			}
			name := NormalizeHashtag(e.text)
			href := o.TagURL(name)
			b.WriteString(linkHashtag(href, e.text))
			if !seenTag[name] {
				seenTag[name] = true
				r.Hashtags = append(r.Hashtags, name)
				r.Tags = append(r.Tags, Tag{Type: "Hashtag", Href: href, Name: "#" + hashtagDisplayName(e.text)})
			}
		case entityMention:
			m, ok := mentions.byHandle[handle(e, o.LocalDomain)]
			if !ok {
				b.WriteString(escape(text[e.start:e.end]))
				continue
			}
			b.WriteString(linkMention(m.URL, mentions.display(m, o.LocalDomain)))
		}
	}
	b.WriteString(escape(text[last:]))
	r.Content = paragraphs(b.String())

	// Mention tags first, as Mastodon's NoteSerializer lists them.
	var hashtags []Tag
	hashtags, r.Tags = r.Tags, nil
	for _, m := range mentions.ordered {
		r.Tags = append(r.Tags, Tag{Type: "Mention", Href: m.ID, Name: "@" + m.Username + "@" + m.Host})
		r.Recipients = append(r.Recipients, m.ID)
	}
	r.Tags = append(r.Tags, hashtags...)
	return r, nil
}

// mentionSet is the resolved mentions of one post.
type mentionSet struct {
	byHandle map[string]Mention // by lower-case "user@host" as typed
	ordered  []Mention          // distinct actors, in the order typed
}

// display is the name a mention shows: the user name alone, as Mastodon
// does, unless another mentioned account has the same user name on another
// server; then remote ones show "user@host" (Account#pretty_acct).
func (s mentionSet) display(m Mention, local string) string {
	if strings.EqualFold(m.Host, local) {
		return m.Username
	}
	for _, other := range s.ordered {
		if other.ID != m.ID && strings.EqualFold(other.Username, m.Username) {
			return m.Username + "@" + m.Host
		}
	}
	return m.Username
}

// handle is the lower-case "user@host" a mention entity names.
func handle(e entity, local string) string {
	host := e.host
	if host == "" {
		host = local
	}
	return strings.ToLower(e.user + "@" + host)
}

// resolveMentions resolves each distinct handle once, in the order typed, as
// ProcessMentionsService does (one lookup at a time), and records the ones
// that failed in r.Unresolved.
func resolveMentions(ctx context.Context, entities []entity, o Options, r *Result) (mentionSet, error) {
	s := mentionSet{byHandle: map[string]Mention{}}
	tried := map[string]bool{}
	seenActor := map[string]bool{}
	for _, e := range entities {
		if e.kind != entityMention {
			continue
		}
		h := handle(e, o.LocalDomain)
		if tried[h] {
			continue
		}
		tried[h] = true
		typedHost := strings.ToLower(e.host)
		if typedHost == "" {
			typedHost = strings.ToLower(o.LocalDomain)
		}
		asTyped := e.user + "@" + typedHost
		if len(tried) > MaxMentions {
			r.Unresolved = append(r.Unresolved, Unresolved{Handle: asTyped, Err: ErrTooManyMentions})
			continue
		}
		m, err := resolveOne(ctx, o.Resolve, asTyped)
		if err != nil {
			if ctx.Err() != nil {
				return mentionSet{}, fmt.Errorf("compose: resolving mentions: %w", ctx.Err())
			}
			r.Unresolved = append(r.Unresolved, Unresolved{Handle: asTyped, Err: err})
			continue
		}
		if m.Username == "" {
			m.Username = e.user
		}
		if m.Host == "" {
			m.Host = typedHost
		}
		s.byHandle[h] = m
		if !seenActor[m.ID] {
			seenActor[m.ID] = true
			s.ordered = append(s.ordered, m)
		}
	}
	return s, nil
}

func resolveOne(ctx context.Context, resolve Resolver, h string) (Mention, error) {
	if resolve == nil {
		return Mention{}, errors.New("compose: no resolver")
	}
	m, err := resolve(ctx, h)
	if err != nil {
		return Mention{}, err
	}
	// The id and the profile URL came from another server (WebFinger, the
	// actor document): only absolute http(s) URLs go into links.
	if !absoluteHTTP(m.ID) {
		return Mention{}, ErrInvalidMention
	}
	if !absoluteHTTP(m.URL) {
		m.URL = m.ID
	}
	return m, nil
}

func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// languageRE accepts a BCP 47 tag's shape: a primary language subtag of 2 or
// 3 letters and optional subtags ("en", "pt-BR", "zh-Hant-TW").
var languageRE = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)

func language(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	if !languageRE.MatchString(tag) {
		return "", fmt.Errorf("%w: %q", ErrLanguage, tag)
	}
	primary, rest, _ := strings.Cut(tag, "-")
	if rest != "" {
		return strings.ToLower(primary) + "-" + rest, nil
	}
	return strings.ToLower(primary), nil
}

// Apply sets the composed fields on a Note (or any object) being built:
// content; contentMap when there is a language; summary and sensitive: true
// when there is a content warning; inReplyTo; and the tags, appended to any
// "tag" entries already there. It leaves the addressing (to, cc) alone.
func (r Result) Apply(note *as.Object) {
	note.Content = r.Content
	if r.Language != "" {
		note.ContentMap = as.LangMap{r.Language: r.Content}
	}
	if r.Summary != "" {
		note.Summary = r.Summary
		note.Set("sensitive", true)
	}
	if r.InReplyTo != "" {
		note.InReplyTo = as.IRI(r.InReplyTo)
	}
	for _, t := range r.Tags {
		note.Tag = append(note.Tag, as.Embed(&as.Object{Type: as.Types{t.Type}, Href: t.Href, Name: t.Name}))
	}
}
