package main

import (
	"bufio"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureArrows holds docs/ARCHITECTURE.md's table of imports
// (the block after "<!-- imports -->": one line per package, its name and
// the Herald packages it imports) to the code: every package of the
// module (in a default build: no tags, no tests) is listed, with exactly
// the Herald packages it imports. When an import changes, the page
// changes in the same commit.
func TestArchitectureArrows(t *testing.T) {
	documented := documentedImports(t, "docs/ARCHITECTURE.md")
	actual := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != "." && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here (in a default build)
		}
		name := filepath.ToSlash(path)
		if name == "." {
			name = "herald"
		}
		var deps []string
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, "herald/"); ok {
				deps = append(deps, dep)
			}
		}
		actual[name] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(actual) < 20 {
		t.Fatalf("only %d packages found: the walk missed the module", len(actual))
	}
	for pkg, deps := range actual {
		doc, ok := documented[pkg]
		switch {
		case !ok:
			t.Errorf("docs/ARCHITECTURE.md: package %s is not in the table of imports; it imports: %s", pkg, strings.Join(deps, " "))
		case !slices.Equal(doc, deps):
			t.Errorf("docs/ARCHITECTURE.md: %s imports %q, the table says %q", pkg, strings.Join(deps, " "), strings.Join(doc, " "))
		}
	}
	for pkg := range documented {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md: the table lists %s, which is not a package", pkg)
		}
	}
}

// documentedImports reads the table of imports from the page at path:
// "pkg: dep dep ..." lines in the fenced block after "<!-- imports -->",
// the deps sorted as go/build lists them.
func documentedImports(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := map[string][]string{}
	state := 0 // 0 before the marker, 1 before the block, 2 in it
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.TrimSpace(line) == "<!-- imports -->":
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return table
		case state == 2:
			pkg, deps, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: %q is not \"package: imports\"", path, line)
			}
			list := strings.Fields(deps)
			slices.Sort(list)
			table[strings.TrimSpace(pkg)] = list
		}
	}
	t.Fatalf("%s: no table of imports (a fenced block after <!-- imports -->)", path)
	return nil
}
