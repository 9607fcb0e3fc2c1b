package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// TableCount is how many rows one table held on each side of a copy.
type TableCount struct {
	Table    string
	From, To int64
}

// CopyTo copies every row of an SQLite database (db) into an empty
// PostgreSQL one (to), in one PostgreSQL transaction that commits only if
// every table then holds as many rows as the source: the move of an
// instance from SQLite to PostgreSQL. Both must be at the same migration
// (opening them with this binary puts them there). The caller holds the
// source's serve lock, so no server writes to it meanwhile; the source is
// read in one transaction, so it is copied as of one moment anyway.
//
// Tables and columns are read from the source's schema, in an order that
// puts every table after the tables its foreign keys name; values keep
// their meaning across the engines' types (an SQLite 0/1 flag becomes a
// BOOLEAN, a BLOB a BYTEA). Identity columns continue after the largest
// copied id.
func (db *DB) CopyTo(ctx context.Context, to *DB) ([]TableCount, error) {
	if db.Engine() != SQLite || to.Engine() != PostgreSQL {
		return nil, errors.New("copy goes from an SQLite file to a PostgreSQL database")
	}
	from, err := db.Migrations(ctx)
	if err != nil {
		return nil, err
	}
	dest, err := to.Migrations(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(from, dest) {
		return nil, fmt.Errorf("the two databases are at different migrations (%d and %d): open both with this Herald first", len(from), len(dest))
	}
	var counts []TableCount
	err = db.Read(ctx, func(src *Tx) error {
		tables, err := src.sqliteTables(ctx)
		if err != nil {
			return err
		}
		return to.pgConn(ctx, func(c *pgx.Conn) error {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			for _, t := range tables {
				var n int64
				if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
					return fmt.Errorf("%s: %w (is it the same Herald's schema?)", t, err)
				}
				if n > 0 {
					return fmt.Errorf("%s already holds data (its %s table is not empty): copy into a new, empty database", to.shown, t)
				}
			}
			counts = counts[:0]
			for _, t := range tables {
				c, err := src.copyTable(ctx, tx, t)
				if err != nil {
					return fmt.Errorf("copy %s: %w", t, err)
				}
				counts = append(counts, c)
			}
			for _, c := range counts {
				if c.From != c.To {
					return fmt.Errorf("%s: %d rows in the source, %d copied: nothing was committed", c.Table, c.From, c.To)
				}
			}
			return tx.Commit(ctx)
		})
	})
	return counts, err
}

// sqliteTables lists the source's tables (but schema_migrations, and
// policy_version, which the destination's triggers make), each
// after the tables it references.
func (tx *Tx) sqliteTables(ctx context.Context) ([]string, error) {
	names, err := column[string](ctx, tx.r, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('schema_migrations', 'policy_version') ORDER BY name`)
	if err != nil {
		return nil, err
	}
	deps := map[string][]string{}
	for _, t := range names {
		if deps[t], err = column[string](ctx, tx.r, `SELECT "table" FROM pragma_foreign_key_list($1)`, t); err != nil {
			return nil, err
		}
	}
	var out []string
	done := map[string]bool{}
	var visit func(t string, path []string) error
	visit = func(t string, path []string) error {
		if done[t] {
			return nil
		}
		if slices.Contains(path, t) {
			return fmt.Errorf("foreign keys go round: %s", strings.Join(append(path, t), " -> "))
		}
		for _, d := range deps[t] {
			if d != t {
				if err := visit(d, append(path, t)); err != nil {
					return err
				}
			}
		}
		done[t] = true
		out = append(out, t)
		return nil
	}
	for _, t := range names {
		if err := visit(t, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// copyTable copies one table with COPY and counts both sides.
func (src *Tx) copyTable(ctx context.Context, dst pgx.Tx, table string) (TableCount, error) {
	res := TableCount{Table: table}
	cols, err := column[string](ctx, src.r, `SELECT name FROM pragma_table_info($1) ORDER BY cid`, table)
	if err != nil {
		return res, err
	}
	types := map[string]string{}
	rows, err := dst.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return res, err
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return res, err
		}
		types[name] = typ
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, err
	}
	if len(types) != len(cols) {
		return res, fmt.Errorf("%d columns in the source, %d in the destination", len(cols), len(types))
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		if types[c] == "" {
			return res, fmt.Errorf("column %s is not in the destination", c)
		}
		quoted[i] = `"` + c + `"`
	}
	if err := src.r.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`"`).Scan(&res.From); err != nil {
		return res, err
	}
	in, err := src.r.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM "`+table+`"`)
	if err != nil {
		return res, err
	}
	defer in.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var convErr error
	next := func() ([]any, error) {
		if err := in.Scan(ptrs...); err != nil {
			return nil, err
		}
		out := make([]any, len(cols))
		for i, v := range vals {
			out[i], convErr = pgValue(v, types[cols[i]])
			if convErr != nil {
				return nil, fmt.Errorf("column %s: %w", cols[i], convErr)
			}
		}
		return out, nil
	}
	source := pgx.CopyFromFunc(func() ([]any, error) {
		if !in.Next() {
			return nil, in.Err()
		}
		return next()
	})
	if res.To, err = dst.CopyFrom(ctx, pgx.Identifier{table}, cols, source); err != nil {
		return res, err
	}
	// An identity column continues after the largest id copied.
	if types["id"] != "" {
		var seq *string
		if err := dst.QueryRow(ctx, `SELECT pg_get_serial_sequence($1, 'id')`, table).Scan(&seq); err != nil {
			return res, err
		}
		if seq != nil {
			if _, err := dst.Exec(ctx, `SELECT setval($1, (SELECT coalesce(max(id), 0) + 1 FROM `+pgx.Identifier{table}.Sanitize()+`), false)`, *seq); err != nil {
				return res, err
			}
		}
	}
	if err := dst.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&res.To); err != nil {
		return res, err
	}
	return res, nil
}

// pgValue is an SQLite value as the PostgreSQL column of type typ takes it.
func pgValue(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "boolean":
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case bool:
			return x, nil
		}
		return nil, fmt.Errorf("want 0 or 1 for a boolean, got %T", v)
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case "text":
		switch x := v.(type) {
		case []byte:
			return string(x), nil
		}
	}
	return v, nil
}
