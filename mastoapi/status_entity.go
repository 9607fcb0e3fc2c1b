package mastoapi

// Status is Mastodon's Status entity (REST::StatusSerializer). The
// viewer's flags (favourited, reblogged, muted, bookmarked, filtered) are
// there only for a logged-in viewer, pinned only on the viewer's own
// public posts, text only in the answer to a deletion, as Mastodon
// serializes them.
type Status struct {
	ID                 string            `json:"id"`
	URI                string            `json:"uri"`
	URL                *string           `json:"url"`
	CreatedAt          Timestamp         `json:"created_at"`
	Account            Account           `json:"account"`
	Content            string            `json:"content"`
	Visibility         string            `json:"visibility"`
	Sensitive          bool              `json:"sensitive"`
	SpoilerText        string            `json:"spoiler_text"`
	MediaAttachments   []MediaAttachment `json:"media_attachments"`
	Mentions           []Mention         `json:"mentions"`
	Tags               []StatusTag       `json:"tags"`
	Emojis             []CustomEmoji     `json:"emojis"`
	ReblogsCount       int               `json:"reblogs_count"`
	FavouritesCount    int               `json:"favourites_count"`
	RepliesCount       int               `json:"replies_count"`
	InReplyToID        *string           `json:"in_reply_to_id"`
	InReplyToAccountID *string           `json:"in_reply_to_account_id"`
	Reblog             *Status           `json:"reblog"`
	Poll               *Poll             `json:"poll"`
	Card               *struct{}         `json:"card"`
	Language           *string           `json:"language"`
	Text               *string           `json:"text,omitempty"`
	EditedAt           Timestamp         `json:"edited_at"`
	Favourited         *bool             `json:"favourited,omitempty"`
	Reblogged          *bool             `json:"reblogged,omitempty"`
	Muted              *bool             `json:"muted,omitempty"`
	Bookmarked         *bool             `json:"bookmarked,omitempty"`
	Pinned             *bool             `json:"pinned,omitempty"`
	Filtered           []any             `json:"filtered,omitempty"`
	// Quote is what it quotes (Mastodon 4.5): a *Quote, a *ShallowQuote
	// in a quoted status, nil (null) when it quotes nothing shown.
	Quote         any            `json:"quote"`
	QuoteApproval *QuoteApproval `json:"quote_approval"`
	QuotesCount   int            `json:"quotes_count"`
	// Pleroma carries the emoji reactions, in the shape Pleroma and
	// Akkoma give them (pleroma.emoji_reactions) and apps that show
	// reactions read.
	Pleroma *PleromaStatus `json:"pleroma,omitempty"`
}

// PleromaStatus is Pleroma's extension of a status: its emoji reactions.
type PleromaStatus struct {
	EmojiReactions []EmojiReaction `json:"emoji_reactions"`
}

// EmojiReaction is one emoji's reactions to a status, Pleroma's shape.
type EmojiReaction struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Me    bool    `json:"me"`
	URL   *string `json:"url"`
}

// MediaAttachment is Mastodon's MediaAttachment entity. Herald keeps no
// copies of remote files: a remote attachment's url is its server's, as
// its remote_url is.
type MediaAttachment struct {
	ID               string         `json:"id"`
	Type             string         `json:"type"` // image, gifv, video, audio, unknown
	URL              *string        `json:"url"`
	PreviewURL       *string        `json:"preview_url"`
	RemoteURL        *string        `json:"remote_url"`
	PreviewRemoteURL *string        `json:"preview_remote_url"`
	TextURL          *string        `json:"text_url"`
	Meta             map[string]any `json:"meta"`
	Description      *string        `json:"description"`
	Blurhash         *string        `json:"blurhash"`
}

// Mention is a status's mention of an account.
type Mention struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	URL      string `json:"url"`
	Acct     string `json:"acct"`
}

// StatusTag is a hashtag used in a status.
type StatusTag struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// CustomEmoji is Mastodon's CustomEmoji entity (in a status, the emoji
// its text uses).
type CustomEmoji struct {
	Shortcode       string `json:"shortcode"`
	URL             string `json:"url"`
	StaticURL       string `json:"static_url"`
	VisibleInPicker bool   `json:"visible_in_picker"`
}

// Poll is Mastodon's Poll entity. Its id is its status's.
type Poll struct {
	ID          string        `json:"id"`
	ExpiresAt   Timestamp     `json:"expires_at"`
	Expired     bool          `json:"expired"`
	Multiple    bool          `json:"multiple"`
	VotesCount  int           `json:"votes_count"`
	VotersCount *int          `json:"voters_count"`
	Options     []PollOption  `json:"options"`
	Emojis      []CustomEmoji `json:"emojis"`
	Voted       *bool         `json:"voted,omitempty"`
	OwnVotes    *[]int        `json:"own_votes,omitempty"`
}

// PollOption is one of a poll's choices.
type PollOption struct {
	Title      string `json:"title"`
	VotesCount *int   `json:"votes_count"`
}

// StatusSource is what a status's author wrote (GET /statuses/:id/source).
type StatusSource struct {
	ID          string `json:"id"`
	Text        string `json:"text"`
	SpoilerText string `json:"spoiler_text"`
}

// Context is a status's thread: what it answers and what answers it.
type Context struct {
	Ancestors   []Status `json:"ancestors"`
	Descendants []Status `json:"descendants"`
}
