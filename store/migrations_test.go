package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"herald/store/internal/schema"
)

// TestMigrationsGenerated: the committed migrations of both engines are
// exactly what store/schema gives (`go generate ./store` writes them), so
// the two trees cannot drift; and no migration sits outside an engine's
// folder, where neither would embed it.
func TestMigrationsGenerated(t *testing.T) {
	stray, _ := filepath.Glob("migrations/*.sql")
	for _, f := range stray {
		t.Errorf("%s is in no engine's folder: migrations are written in schema/ and generated (go generate ./store)", f)
	}
	want, err := schema.Generate("schema")
	if err != nil {
		t.Fatal(err)
	}
	if len(want[schema.SQLite]) == 0 {
		t.Fatal("no migrations in schema/")
	}
	for _, engine := range schema.Engines {
		dir := filepath.Join("migrations", engine)
		committed, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range committed {
			if _, ok := want[engine][filepath.Base(f)]; !ok {
				t.Errorf("%s has no source in schema/: write it there and run go generate ./store", f)
			}
		}
		for name, body := range want[engine] {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s/%s: %v (run go generate ./store)", dir, name, err)
				continue
			}
			if !bytes.Equal(got, body) {
				t.Errorf("%s/%s differs from what schema/%s gives: edit the source and run go generate ./store", dir, name, name)
			}
		}
	}
}
