package mastoapi

import (
	"strconv"
	"time"

	"herald/store"
)

// timeLayout is how Mastodon writes times: ISO 8601 in UTC with
// milliseconds and Z (Rails' as_json with ActiveSupport's default
// precision of 3), "2024-05-01T12:34:56.789Z".
const timeLayout = "2006-01-02T15:04:05.000Z"

// Time is a time as Mastodon writes it.
func Time(t time.Time) string { return t.UTC().Format(timeLayout) }

// Timestamp marshals to JSON as Mastodon writes times; the zero time is
// null.
type Timestamp time.Time

// MarshalJSON writes the time as Time does, or null.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + Time(time.Time(t)) + `"`), nil
}

// Day is midnight UTC of t's day: Mastodon shows an account's created_at
// as the day only (AccountSerializer#created_at, created_at.midnight), so
// it does not tell when in the day someone signed up.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ID writes an id as the API shows every id: a decimal string (ids are
// 64-bit and JavaScript's numbers are not).
func ID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseID reads an id the API showed; ok is false for anything that is
// not a positive decimal number.
func ParseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// NewID is a new time-ordered id for a row made at t (store.Snowflake):
// what statuses, notifications and other rows a timeline pages through
// are keyed by. A remote status's id is made from its published time
// (clamped to now, as Mastodon does), so a timeline sorts by when things
// were written; the later wave's tables store it as their primary key.
func NewID(t time.Time) int64 { return store.Snowflake(t) }

// UnmarshalJSON reads a time as Time writes it, or null.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Timestamp{}
		return nil
	}
	v, err := time.Parse(`"`+timeLayout+`"`, string(b))
	*t = Timestamp(v)
	return err
}
