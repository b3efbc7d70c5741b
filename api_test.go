package distsync_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// No exported declaration of a public package names a type of a package
// under internal/, which no program outside the module can name: not a
// signature of an exported function or method, nor an exported type's
// definition, field or method, nor the type of an exported variable or
// constant (one declared without a type must not take its value from such
// a package, as its type would follow). Unexported types that exported
// declarations reach (a returned *impl, an embedded field) are held to the
// same rule for their exported fields and methods. The public packages are
// every package of the library module outside internal/, and the OpenTelemetry
// adapter.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	t.Parallel()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." && (d.Name() == "internal" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || exists(filepath.Join(path, "go.mod"))) {
			return filepath.SkipDir // another module, or not public
		}
		if len(sources(t, path)) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	require.NoError(t, err)
	dirs = append(dirs, "otel")
	for _, want := range []string{".", "mutex", "rwlock", "fairlock", "semaphore", "latch", "multilock", "redlock", "observe"} {
		require.Contains(t, dirs, want, "a public package is checked")
	}
	for _, dir := range dirs {
		for _, leak := range internalTypesIn(t, dir) {
			t.Errorf("%s", leak)
		}
	}
}

// internalTypesIn returns where the exported API of the package in dir
// names a package under internal/.
func internalTypesIn(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	type (
		typeDecl struct {
			file *ast.File
			spec *ast.TypeSpec
		}
		method struct {
			file *ast.File
			decl *ast.FuncDecl
		}
	)
	types := map[string]typeDecl{}              // the package's types
	methods := map[string][]method{}            // by receiver type
	internal := map[*ast.File]map[string]bool{} // the names each file imports internal packages by
	var files []*ast.File
	for _, path := range sources(t, dir) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
		internal[f] = internalImports(t, f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						types[ts.Name.Name] = typeDecl{f, ts}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil {
					r := receiver(d.Recv.List[0].Type)
					methods[r] = append(methods[r], method{f, d})
				}
			}
		}
	}

	var leaks []string
	var reached []string // local types whose exported fields and methods count
	seen := map[string]bool{}
	reach := func(name string) {
		if _, ok := types[name]; ok && !seen[name] {
			seen[name] = true
			reached = append(reached, name)
		}
	}
	// check records the internal packages the type expression e names, and
	// reaches the local types it names (not the names of parameters).
	var check func(f *ast.File, what string, e ast.Node)
	check = func(f *ast.File, what string, e ast.Node) {
		if e == nil || reflect.ValueOf(e).IsNil() {
			return
		}
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				check(f, what, n.Type)
				return false
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && internal[f][x.Name] {
					leaks = append(leaks, fset.Position(n.Pos()).String()+": "+what+" names "+x.Name+"."+n.Sel.Name)
				}
				return false
			case *ast.Ident:
				reach(n.Name)
			}
			return true
		})
	}

	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					check(f, "func "+d.Name.Name, d.Type)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							reach(s.Name.Name)
						}
					case *ast.ValueSpec:
						if !slices.ContainsFunc(s.Names, (*ast.Ident).IsExported) {
							continue
						}
						what := d.Tok.String() + " " + s.Names[0].Name
						if s.Type != nil {
							check(f, what, s.Type)
							continue
						}
						for _, v := range s.Values {
							check(f, what+" (declare its type)", v)
						}
					}
				}
			}
		}
	}
	// Each reached type: its definition but unexported fields and methods,
	// and its exported methods.
	for len(reached) > 0 {
		name := reached[0]
		reached = reached[1:]
		d, what := types[name], "type "+name
		check(d.file, what, d.spec.TypeParams)
		switch typ := d.spec.Type.(type) {
		case *ast.StructType:
			for _, fld := range typ.Fields.List {
				if len(fld.Names) == 0 || slices.ContainsFunc(fld.Names, (*ast.Ident).IsExported) {
					check(d.file, what+" field", fld.Type) // an embedded field promotes
				}
			}
		case *ast.InterfaceType:
			for _, m := range typ.Methods.List {
				if len(m.Names) == 0 || m.Names[0].IsExported() {
					check(d.file, what+" method", m.Type)
				}
			}
		default:
			check(d.file, what, typ)
		}
		for _, m := range methods[name] {
			if m.decl.Name.IsExported() {
				check(m.file, "method "+name+"."+m.decl.Name.Name, m.decl.Type)
			}
		}
	}
	return leaks
}

// internalImports returns the names f imports the module's internal
// packages by (the package's own name, read from its source, unless
// renamed).
func internalImports(t *testing.T, f *ast.File) map[string]bool {
	t.Helper()
	const module = "github.com/distsync/distsync/"
	names := map[string]bool{}
	for _, im := range f.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		require.NoError(t, err)
		rel, ok := strings.CutPrefix(path, module)
		if !ok || !(strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")) {
			continue
		}
		if im.Name != nil {
			names[im.Name.Name] = true
			continue
		}
		srcs := sources(t, rel)
		require.NotEmpty(t, srcs, "the source of %s", path)
		pkg, err := parser.ParseFile(token.NewFileSet(), srcs[0], nil, parser.PackageClauseOnly)
		require.NoError(t, err)
		names[pkg.Name.Name] = true
	}
	return names
}

// sources returns the non-test Go files of the package in dir.
func sources(t *testing.T, dir string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	return slices.DeleteFunc(all, func(p string) bool { return strings.HasSuffix(p, "_test.go") })
}

// receiver returns the type name of a method's receiver (T of *T, T[P]).
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
