package store

import "time"

// Every time in the schema is in unix milliseconds (migration 0110 made it
// one unit; the queues' times always were). The columns that held seconds
// until then keep a second's precision: the store writes whole seconds
// into them (wholeSeconds), so that what the pages, the commands and the
// apps show of them is as it was, and a converted database and a new one
// hold the same kind of values. Read them all with time.UnixMilli.

// wholeSeconds is t in unix milliseconds, to the second.
func wholeSeconds(t time.Time) int64 { return t.Unix() * 1000 }

// minuteStart is the start of t's minute in unix milliseconds: the key of
// delivery_history.
func minuteStart(t time.Time) int64 { return t.Unix() / 60 * 60_000 }

// dayStart is the start of t's UTC day in unix milliseconds: the key of
// host_failures.
func dayStart(t time.Time) int64 { return t.Unix() / 86400 * 86_400_000 }
