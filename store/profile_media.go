package store

import "context"

// SetProfile is SetActorProfile that also records which uploads are the
// actor's avatar and header now (media ids, 0 for none): those are kept
// while they are, though no post attaches them, and the ones they replace
// become unattached uploads that MediaToRemove sweeps. The new ones are
// marked first and the old ones unmarked last, so a failure between the
// steps keeps a file too many, never loses one a profile shows. (In a
// transaction the three are one.)
func (q *Queries) SetProfile(ctx context.Context, a *Actor, avatarMedia, headerMedia int64) error {
	err := q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE media SET profile_of = $1 WHERE actor_id = $1 AND (id = $2 OR id = $3)`, a.ID, avatarMedia, headerMedia)
		return err
	})
	if err != nil {
		return err
	}
	if err := q.SetActorProfile(ctx, a); err != nil {
		return err
	}
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE media SET profile_of = NULL WHERE profile_of = $1 AND id != $2 AND id != $3`, a.ID, avatarMedia, headerMedia)
		return err
	})
}

// ProfileMedia returns the ids of the uploads that are a local actor's
// avatar and header now (0 for none).
func (q *Queries) ProfileMedia(ctx context.Context, a *Actor) (avatar, header int64, err error) {
	rows, err := q.r.QueryContext(ctx, `SELECT id, file FROM media WHERE profile_of = $1`, a.ID)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var file string
		if err := rows.Scan(&id, &file); err != nil {
			return 0, 0, err
		}
		switch {
		case a.AvatarURL != "" && hasSuffixFile(a.AvatarURL, file):
			avatar = id
		case a.HeaderURL != "" && hasSuffixFile(a.HeaderURL, file):
			header = id
		}
	}
	return avatar, header, rows.Err()
}

func hasSuffixFile(u, file string) bool {
	return len(u) > len(file) && u[len(u)-len(file)-1:] == "/"+file
}
