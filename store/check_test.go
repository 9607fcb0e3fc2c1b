package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestMigrationStateAndIntegrity: OpenToCheck applies nothing, and
// MigrationState names what this binary would apply and what a newer one
// applied; a sound file passes the integrity check.
func TestMigrationStateAndIntegrity(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := db.Migrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := applied[len(applied)-1]
	if _, err := db.writer.ExecContext(ctx, `DELETE FROM schema_migrations WHERE name = $1`, last); err != nil {
		t.Fatal(err)
	}
	if _, err := db.writer.ExecContext(ctx, `INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	check, err := OpenToCheck(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	pending, unknown, err := check.MigrationState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pending, []string{last}) || !slices.Equal(unknown, []string{"9999_from_the_future"}) {
		t.Errorf("pending %v, unknown %v", pending, unknown)
	}
	if now, _ := check.Migrations(ctx); slices.Contains(now, last) {
		t.Error("OpenToCheck applied a migration")
	}
	problems, checked, err := check.Integrity(ctx)
	if err != nil || !checked || len(problems) > 0 {
		t.Errorf("integrity: %v %v %v", problems, checked, err)
	}
	if _, err := OpenToCheck(ctx, filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Error("OpenToCheck made a database")
	}
}
