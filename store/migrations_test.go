package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMigrationFolders: every migration is in an engine's folder (one left
// in migrations/ itself would be embedded by neither), and both folders
// hold the same names, so neither engine misses a step.
func TestMigrationFolders(t *testing.T) {
	stray, _ := filepath.Glob("migrations/*.sql")
	for _, f := range stray {
		t.Errorf("%s is in no engine's folder: move it to migrations/sqlite and write its twin in migrations/postgres", f)
	}
	names := func(dir string) []string {
		files, err := os.ReadDir(filepath.Join("migrations", dir))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".sql") {
				out = append(out, f.Name())
			}
		}
		return out
	}
	sqlite, postgres := names("sqlite"), names("postgres")
	for _, n := range sqlite {
		if !slices.Contains(postgres, n) {
			t.Errorf("migrations/sqlite/%s has no PostgreSQL twin", n)
		}
	}
	for _, n := range postgres {
		if !slices.Contains(sqlite, n) {
			t.Errorf("migrations/postgres/%s has no SQLite twin", n)
		}
	}
}
