package outbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/media"
	"herald/store"
)

// MaxAltText is the longest alt text, Mastodon's
// (MediaAttachment::MAX_DESCRIPTION_LENGTH).
const MaxAltText = 1500

// MaxAttachments is how many files one post may carry, Mastodon's
// (MAX_MEDIA_ATTACHMENTS).
const MaxAttachments = 4

// extensions name a stored file after its sniffed type, so that a plain
// file server would serve it right too.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
	"video/mp4": ".mp4", "video/webm": ".webm", "video/ogg": ".ogv",
	"audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/mp4": ".m4a",
}

// StoreMedia keeps an upload of actor's: the bytes are checked
// (media.Probe: the type sniffed, never taken from the client; size and
// pixel limits), written to the media folder beside the database under a
// random name, and recorded. The errors media.ErrTooLarge,
// media.ErrUnsupported and media.ErrInvalid mean the file was refused and
// nothing was kept.
func StoreMedia(ctx context.Context, db *store.DB, actor *store.Actor, r io.Reader, alt string) (*store.Media, error) {
	if utf8.RuneCountInString(alt) > MaxAltText {
		return nil, inputErr("alt text longer than %d characters", MaxAltText)
	}
	data, err := io.ReadAll(io.LimitReader(r, max(media.DefaultLimits.Image, media.DefaultLimits.Video)+1))
	if err != nil {
		return nil, err
	}
	info, err := media.Probe(bytes.NewReader(data), media.DefaultLimits)
	if err != nil {
		return nil, err
	}
	ext, ok := extensions[info.MediaType]
	if !ok {
		return nil, media.ErrUnsupported
	}
	dir := db.MediaDir()
	if dir == "" {
		return nil, store.ErrNoMediaDir
	}
	if err := os.MkdirAll(dir, store.MediaDirMode); err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	rand.Read(b)
	name := hex.EncodeToString(b) + ext
	tmp := filepath.Join(dir, "."+name+".part")
	// Owner only (store.MediaFileMode, whatever the umask): Herald serves
	// the file itself, and followers-only attachments are among them.
	if err := writeFileMode(tmp, data, store.MediaFileMode); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	m := &store.Media{ActorID: actor.ID, File: name, MediaType: info.MediaType, Kind: string(info.Kind), Size: info.Size,
		Width: info.Width, Height: info.Height, Blurhash: info.Blurhash, Description: strings.TrimSpace(alt)}
	if err := db.AddMedia(ctx, m); err != nil {
		os.Remove(filepath.Join(dir, name))
		return nil, err
	}
	return m, nil
}

// AttachmentDocument is a stored file as a post's attachment, in the shape
// Mastodon sends (app/serializers/activitypub/note_serializer.rb's
// MediaAttachmentSerializer): a Document with its type, alt text (name),
// size and BlurHash.
func AttachmentDocument(inst federation.Instance, m *store.Media) *as.Object {
	doc := &as.Object{Type: as.Types{"Document"}, MediaType: m.MediaType, URL: as.IRIs(inst.MediaURL(m.File)), Name: m.Description}
	if m.Width > 0 && m.Height > 0 {
		doc.Set("width", m.Width)
		doc.Set("height", m.Height)
	}
	if m.Blurhash != "" {
		doc.Set("blurhash", m.Blurhash)
	}
	return doc
}

// attachments fills in the attachments of a post that name files uploaded
// here (by their /media/ URL): each must be the actor's own and not yet
// attached to another post. It returns their ids, for the post's
// transaction to attach them. Attachments elsewhere are kept as sent, and
// the list is written as a list.
func (p *Publisher) attachments(ctx context.Context, pl *plan, obj *as.Object, objectID int64) ([]int64, error) {
	list := slices.Clone(obj.Attachment)
	if len(list) == 0 {
		return nil, nil
	}
	if len(list) > MaxAttachments {
		return nil, inputErr("at most %d attachments", MaxAttachments)
	}
	prefix := p.Instance.MediaURL("")
	var ids []int64
	for i, a := range list {
		u := a.ID
		if a.Embedded != nil {
			u = a.Embedded.URL.First()
		}
		file, ok := strings.CutPrefix(u, prefix)
		if !ok {
			continue
		}
		m, err := p.DB.MediaByFile(ctx, file)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, inputErr("attachment %s: no such upload", u)
		case err != nil:
			return nil, err
		case m.ActorID != pl.actor.ID || m.Removed || (m.ObjectID != 0 && m.ObjectID != objectID):
			return nil, inputErr("attachment %s is not an upload of %s that can be attached", u, pl.actor.Name)
		}
		doc := AttachmentDocument(p.Instance, m)
		if a.Embedded != nil && a.Embedded.Name != "" {
			doc.Name = a.Embedded.Name // alt text given with the post wins
		}
		list[i] = as.Embed(doc)
		ids = append(ids, m.ID)
	}
	obj.Delete("attachment") // written from the list, as a list
	obj.Attachment = list
	return ids, nil
}

// RemoveMediaFiles deletes the files no post needs any more (see
// store.MediaToRemove) and returns how many it removed.
func RemoveMediaFiles(ctx context.Context, db *store.DB) (int, error) {
	if db.MediaDir() == "" {
		return 0, nil // no folder, so no files to remove
	}
	list, err := db.MediaToRemove(ctx, 100)
	if err != nil {
		return 0, err
	}
	for _, m := range list {
		if err := os.Remove(filepath.Join(db.MediaDir(), m.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("remove %s: %w", m.File, err)
		}
		if err := db.MarkMediaRemoved(ctx, m.ID); err != nil {
			return 0, err
		}
	}
	return len(list), nil
}

// writeFileMode writes a new file with exactly mode, umask or not.
func writeFileMode(name string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// RemoveActorMedia removes every upload of a local actor deleted for good,
// files and rows, limit at a time: each batch is marked removed in one
// transaction (store.ReleaseActorMedia), its files are removed after that
// commit, then its rows go. A failure stops it with nothing lost; the next
// call goes on from there. It returns how many it removed.
func RemoveActorMedia(ctx context.Context, db *store.DB, actorID int64, limit int) (int, error) {
	n := 0
	for {
		list, err := db.ReleaseActorMedia(ctx, actorID, limit)
		if err != nil || len(list) == 0 {
			return n, err
		}
		ids := make([]int64, 0, len(list))
		for _, m := range list {
			if dir := db.MediaDir(); dir != "" && m.File != "" {
				if err := os.Remove(filepath.Join(dir, m.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return n, fmt.Errorf("remove %s: %w", m.File, err)
				}
			}
			ids = append(ids, m.ID)
		}
		if err := db.DeleteReleasedMedia(ctx, actorID, ids); err != nil {
			return n, err
		}
		n += len(ids)
	}
}
