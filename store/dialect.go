package store

import "encoding/json"

// The few places where SQLite and PostgreSQL need different SQL. Everything
// else is written once: $N placeholders, RETURNING, bare boolean columns,
// ON CONFLICT, aliases on subqueries.

// inList is the condition "col is one of the list bound at placeholder
// param": json_each over a JSON array on SQLite, = ANY over an array on
// PostgreSQL. Bind the list with listArg.
func (db *DB) inList(col, param string) string {
	if db.engine == PostgreSQL {
		return col + " = ANY(" + param + ")"
	}
	return col + " IN (SELECT value FROM json_each(" + param + "))"
}

// listArg is a list ([]int64, []string) as inList binds it.
func (db *DB) listArg(list any) any {
	if db.engine == PostgreSQL {
		return list
	}
	b, _ := json.Marshal(list)
	return string(b)
}

// skipLocked ends the subquery that picks the rows a claim leases: on
// PostgreSQL it locks them and passes over rows another process is
// claiming at the same moment, so two claims never take the same row and
// never wait for each other. SQLite runs one write at a time and needs
// nothing.
func (db *DB) skipLocked() string {
	if db.engine == PostgreSQL {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// noIndex is col in a condition the planner must not use an index for: on
// SQLite with the unary + that tells it so, on PostgreSQL as it is.
func (db *DB) noIndex(col string) string {
	if db.engine == PostgreSQL {
		return col
	}
	return "+" + col
}
