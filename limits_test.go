package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The size limits of Herald's source (the developers' guide asks for
// small files with one subject each): no file over maxFileLines and
// no function over maxFuncLines, tests and generated files aside. A file
// or function past them is split by subject, not by line count.
const (
	maxFileLines = 500
	maxFuncLines = 120
)

// TestSourceLimits walks the module and fails on every non-test,
// non-generated Go file over maxFileLines lines and every function (or
// method) over maxFuncLines, naming each.
func TestSourceLimits(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Not Herald's: npm's packages, Git's and tools' directories.
			if path != "." && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		files++
		checkLimits(t, fset, path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d files checked: the walk missed the module", files)
	}
}

// checkLimits reports f (parsed from path) if it is too long, and each of
// its functions that is.
func checkLimits(t *testing.T, fset *token.FileSet, path string, f *ast.File) {
	t.Helper()
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		t.Errorf("%s: %d lines, more than %d: split it by subject", path, n, maxFileLines)
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
			t.Errorf("%s: %s is %d lines, more than %d", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
		}
	}
}
