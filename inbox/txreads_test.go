package inbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPoolReadsInsideTheTransaction: a function of this package that is
// handed the inbox's transaction (a *store.Tx parameter) reads through it,
// never through the pool (h.DB) or the Fetcher's cache on the pool
// (h.Keys): on PostgreSQL a pool read while the transaction holds a
// connection can wait on the other transactions holding the rest, and
// stall them all.
func TestNoPoolReadsInsideTheTransaction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !takesTx(fn) {
				continue
			}
			checked++
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if recv, ok := sel.X.(*ast.Ident); ok && recv.Name == "h" && (sel.Sel.Name == "DB" || sel.Sel.Name == "Keys") {
					t.Errorf("%s: %s reads h.%s inside the transaction; read through tx", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no function takes a *store.Tx: the check checks nothing")
	}
}

// takesTx reports whether fn has a *store.Tx parameter.
func takesTx(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		star, ok := p.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Tx" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "store" {
				return true
			}
		}
	}
	return false
}
