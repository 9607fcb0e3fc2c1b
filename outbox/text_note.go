package outbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/compose"
	"herald/store"
)

// TextNote is a post as `herald post` and the app API take it: plain text,
// and whom it is for.
type TextNote struct {
	Text string
	// To is "public" (or ""), "followers", or one account: @user@host or
	// its actor URL (a direct message).
	To        string
	CW        string // a content warning (summary; sensitive)
	InReplyTo string // the URL of the post it answers
	Language  string // a BCP 47 tag such as en or pt-BR: contentMap
	Media     []int64
	Quote     string // the URL of the post it quotes (FEP-044f)
}

// ErrUnresolved wraps the error of a TextNote whose recipient or mention
// could not be found; the message names it.
var ErrUnresolved = errors.New("could not find")

// TextNoteDocument builds the Note a TextNote publishes: the text composed
// as Mastodon does (mentions, hashtags and links), addressed to the public,
// the followers or one account, with its attachments. Publish then adds
// the mentioned accounts, the author of what it answers and a mention of
// the direct recipient. A mention or recipient that cannot be found is an
// error wrapping ErrUnresolved (a post that silently reaches fewer people
// than written would be worse); a bad language is an *InputError.
func (p *Publisher) TextNoteDocument(ctx context.Context, actor *store.Actor, n TextNote) (*as.Object, error) {
	inst := p.Instance
	note := &as.Object{Type: as.Types{"Note"}}
	if n.Quote != "" {
		note.Quote = as.IRI(n.Quote)
	}
	switch n.To {
	case "", "public":
		note.To, note.CC = as.IRIs(federation.Public), as.IRIs(inst.FollowersURL(actor.Name))
	case "followers":
		note.To = as.IRIs(inst.FollowersURL(actor.Name))
	default:
		id := n.To
		if !strings.HasPrefix(id, "https://") && !strings.HasPrefix(id, "http://") {
			if p.Lookup == nil {
				return nil, fmt.Errorf("%w %s: no WebFinger lookup configured", ErrUnresolved, n.To)
			}
			var err error
			if id, err = p.Lookup(ctx, n.To); err != nil {
				return nil, fmt.Errorf("%w %s: %w", ErrUnresolved, n.To, err)
			}
		}
		note.To = as.IRIs(id)
	}
	res, err := p.Compose(ctx, compose.Draft{Text: n.Text, Summary: n.CW, InReplyTo: n.InReplyTo, Language: n.Language})
	if errors.Is(err, compose.ErrLanguage) {
		return nil, inputErr("%q is not a language tag such as en or pt-BR", n.Language)
	}
	if err != nil {
		return nil, err
	}
	if len(res.Unresolved) > 0 {
		u := res.Unresolved[0]
		return nil, fmt.Errorf("%w @%s: %w", ErrUnresolved, u.Handle, u.Err)
	}
	res.Apply(note)
	for _, id := range n.Media {
		m, err := p.DB.MediaByID(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("attachment %d: %w", id, err)
		}
		note.Attachment = append(note.Attachment, as.Embed(&as.Object{Type: as.Types{"Document"}, URL: as.IRIs(inst.MediaURL(m.File))}))
	}
	return note, nil
}
