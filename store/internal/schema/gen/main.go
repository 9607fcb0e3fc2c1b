// Command gen writes store/migrations/sqlite and store/migrations/postgres
// from store/schema (see package schema). `go generate ./store` runs it,
// in the store folder.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"herald/store/internal/schema"
)

func main() {
	if err := run("schema", "migrations"); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run replaces the .sql files of each engine's folder under out with the
// translations of the sources in src.
func run(src, out string) error {
	files, err := schema.Generate(src)
	if err != nil {
		return err
	}
	for engine, byName := range files {
		dir := filepath.Join(out, engine)
		old, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			return err
		}
		for _, f := range old {
			if _, ok := byName[filepath.Base(f)]; !ok {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
		for name, body := range byName {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
