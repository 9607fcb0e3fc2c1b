package mastoapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"herald/outbox"
	"herald/outbox/media"
	"herald/store"
)

// updateCredentials serves PATCH /api/v1/accounts/update_credentials:
// display_name, note (plain text, as Mastodon takes it), avatar and
// header (uploads, kept as the outbox keeps media), fields_attributes,
// locked, bot and discoverable. What was not sent keeps its value. The
// new profile goes to the followers as an Update through the outbox,
// as `herald actor edit` sends it. source[privacy], source[sensitive] and
// source[language] are accepted and not kept (posting defaults are the
// statuses part's).
func (h *Handler) updateCredentials(c *Call) error {
	ctx := c.Ctx()
	a, err := h.DB.ActorByID(ctx, c.Actor.ID)
	if err != nil {
		return err
	}
	p := c.Params
	if p.Has("display_name") {
		a.DisplayName = strings.TrimSpace(p.Get("display_name"))
		if utf8.RuneCountInString(a.DisplayName) > maxDisplayName {
			return invalid("Display name is too long (maximum is %d characters)", maxDisplayName)
		}
	}
	if p.Has("note") {
		a.Summary = strings.TrimSpace(p.Get("note"))
		if utf8.RuneCountInString(a.Summary) > maxNote {
			return invalid("Note is too long (maximum is %d characters)", maxNote)
		}
	}
	if v, set := p.Bool("locked"); set {
		a.ManualApproval = v
	}
	if v, set := p.Bool("discoverable"); set {
		a.Discoverable = v
	}
	if v, set := p.Bool("bot"); set && a.Type != "Group" {
		a.Type = map[bool]string{true: "Service", false: "Person"}[v]
	}
	if recs := p.Records("fields_attributes"); len(recs) > 0 || p.HasList("fields_attributes") {
		var fields []store.ProfileField
		for _, r := range recs {
			name, value := strings.TrimSpace(r["name"]), strings.TrimSpace(r["value"])
			if name == "" && value == "" {
				continue // an emptied row: Mastodon drops it
			}
			if utf8.RuneCountInString(name) > maxFieldChars || utf8.RuneCountInString(value) > maxFieldChars {
				return invalid("Fields are too long (maximum is %d characters a name or value)", maxFieldChars)
			}
			fields = append(fields, store.ProfileField{Name: name, Value: value})
		}
		if len(fields) > maxFields {
			return invalid("Fields is too long (maximum is %d fields)", maxFields)
		}
		a.Fields = fields
	}
	avatarID, headerID, err := h.DB.ProfileMedia(ctx, a)
	if err != nil {
		return err
	}
	for _, img := range []struct {
		param string
		url   *string
		id    *int64
	}{{"avatar", &a.AvatarURL, &avatarID}, {"header", &a.HeaderURL, &headerID}} {
		fh := p.File(img.param)
		if fh == nil {
			continue
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		m, err := outbox.StoreMedia(ctx, h.DB, a, f, "")
		f.Close()
		if err != nil {
			return uploadError(img.param, err)
		}
		if m.Kind != string(media.Image) {
			return invalid("%s must be an image", strings.ToUpper(img.param[:1])+img.param[1:])
		}
		*img.url, *img.id = h.Instance.MediaURL(m.File), m.ID
	}
	if err := h.DB.SetProfile(ctx, a, avatarID, headerID); err != nil {
		return err
	}
	fresh, err := h.DB.ActorByID(ctx, a.ID)
	if err != nil {
		return err
	}
	if _, err := h.Publisher.UpdateActor(ctx, fresh, outbox.Options{}); err != nil {
		return err
	}
	acc, err := h.credentialAccount(ctx, fresh)
	if err != nil {
		return err
	}
	return c.JSON(acc)
}

// invalid is a 422 with Mastodon's "Validation failed: ..." message.
func invalid(format string, args ...any) error {
	return Errorf(http.StatusUnprocessableEntity, "Validation failed: "+fmt.Sprintf(format, args...))
}

// uploadError maps a refused upload to its answer.
func uploadError(param string, err error) error {
	var in *outbox.InputError
	switch {
	case errors.Is(err, media.ErrTooLarge):
		return invalid("%s file is too large (at most %d MB)", param, media.ImageLimit>>20)
	case errors.Is(err, media.ErrUnsupported):
		return invalid("%s has contents that are not what they are reported to be", param)
	case errors.Is(err, media.ErrInvalid):
		return invalid("%s could not be read as an image", param)
	case errors.As(err, &in):
		return invalid("%s", in.Msg)
	}
	return err
}
