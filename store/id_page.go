package store

import "strconv"

// idPage finishes query (whose arguments are args) for one page of p on
// key, an int64 column: the bounds of max_id, since_id and min_id, the
// order and the limit. ascending says the rows come oldest first (a
// min_id page: the ones just newer than Min), which the caller reverses
// with slices.Reverse to answer newest first.
func idPage(query, key string, p KeysetPage[int64], args []any) (string, []any, bool) {
	bound := func(op string, v int64) {
		args = append(args, v)
		query += ` AND ` + key + ` ` + op + ` $` + strconv.Itoa(len(args))
	}
	if p.Max != nil {
		bound("<", *p.Max)
	}
	if p.Since != nil {
		bound(">", *p.Since)
	}
	ascending := p.Min != nil && p.Since == nil
	if p.Min != nil {
		bound(">", *p.Min)
	}
	order := ` ORDER BY ` + key + ` DESC`
	if ascending {
		order = ` ORDER BY ` + key
	}
	args = append(args, p.Limit)
	return query + order + ` LIMIT $` + strconv.Itoa(len(args)), args, ascending
}
