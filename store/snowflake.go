package store

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// Snowflake is an id that sorts by time, as Mastodon's do
// (lib/mastodon/snowflake.rb): the milliseconds since the Unix epoch in
// the high 48 bits and 16 random bits below them, so ids made in the same
// millisecond rarely collide and never reveal how many were made. The
// client API shows accounts, mutes and (later) statuses and notifications
// by such ids; an insert that collides draws again (see insertSnowflake).
// A time before the epoch counts as the epoch.
func Snowflake(t time.Time) int64 {
	ms := max(t.UnixMilli(), 0)
	var b [2]byte
	rand.Read(b[:])
	return ms<<16 | int64(binary.BigEndian.Uint16(b[:]))
}

// SnowflakeTime is the time a Snowflake was made for, to the millisecond.
func SnowflakeTime(id int64) time.Time { return time.UnixMilli(id >> 16).UTC() }

// SnowflakeFloor is the smallest Snowflake of t's millisecond: a bound for
// "everything since t" in a range scan.
func SnowflakeFloor(t time.Time) int64 { return max(t.UnixMilli(), 0) << 16 }
