package allbackends_test

// The architecture tests: the import rules of docs/design.md ("Backends do not
// import each other", "Simulators never import driver/", "driver/ never
// imports simulators/ or lab/") and the steps of "Adding a backend" in
// docs/developing.md that are easy to forget (link it here, take it off the
// planned list, document it). They read the import graph with
// `go list -deps -json ./...`, so they see the module as the compiler does.
//
// They live here because driver/allbackends is where the set of backends is
// defined (its imports are the backend packages), and docs/design.md fixes the top
// level of the repository, so there is no internal/ tree to put them in. The
// package is an external test package: it imports driver/allbackends (to run
// every backend's registration) and driver/backend (to list it).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	_ "github.com/switchyard-csi/switchyard/driver/allbackends"
	"github.com/switchyard-csi/switchyard/driver/backend"
)

// goPackage is the part of `go list -json` output the tests read.
type goPackage struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	Imports      []string // production imports (no _test.go files)
	Deps         []string // every production dependency, transitively
	TestImports  []string
	XTestImports []string
	Module       *struct {
		Path string
		Main bool
	}
}

// module is this module's import graph.
type module struct {
	root string                // directory holding go.mod
	path string                // module path
	pkgs map[string]*goPackage // this module's packages (and only them), by import path
}

// rel is an import path relative to the module ("driver/proxy").
func (m *module) rel(importPath string) string {
	if importPath == m.path {
		return "."
	}
	return strings.TrimPrefix(importPath, m.path+"/")
}

// abs is the import path of a module-relative path.
func (m *module) abs(rel string) string { return m.path + "/" + rel }

// under reports whether importPath is the module-relative dir or below it.
func (m *module) under(importPath, dir string) bool {
	r := m.rel(importPath)
	return r == dir || strings.HasPrefix(r, dir+"/")
}

var (
	loadOnce   sync.Once
	loaded     *module
	loadErr    error
	loadNoGo   bool
	goListArgs = []string{"list", "-deps", "-json", "./..."}
)

// loadModule runs `go list -deps -json ./...` once at the module root.
func loadModule(t *testing.T) *module {
	t.Helper()
	loadOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			loadNoGo = true
			loadErr = err
			return
		}
		root, err := moduleRoot()
		if err != nil {
			loadErr = err
			return
		}
		cmd := exec.Command(goBin, goListArgs...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			loadErr = fmt.Errorf("go %s in %s: %v\n%s", strings.Join(goListArgs, " "), root, err, stderr.String())
			return
		}
		m := &module{root: root, pkgs: map[string]*goPackage{}}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p goPackage
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				loadErr = fmt.Errorf("reading go list output: %v", err)
				return
			}
			if p.Module == nil || !p.Module.Main {
				continue
			}
			m.path = p.Module.Path
			m.pkgs[p.ImportPath] = &p
		}
		if len(m.pkgs) == 0 {
			loadErr = fmt.Errorf("go list found no package of the main module in %s", root)
			return
		}
		loaded = m
	})
	if loadNoGo {
		t.Skipf("the architecture tests read the import graph with `go list`, and no go command is on PATH (%v); add the Go toolchain's bin directory (e.g. /usr/local/go/bin) to PATH", loadErr)
	}
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

// moduleRoot is the nearest directory above the working directory holding
// go.mod (go test runs a test in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's working directory")
		}
		dir = up
	}
}

// chain is the shortest production import path from `from` to a package
// satisfying bad, through this module's packages: ["a", "b", "c"] means a
// imports b, which imports c. It is nil when there is none.
func (m *module) chain(from string, bad func(string) bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := m.pkgs[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := prev[imp]; seen {
				continue
			}
			prev[imp] = cur
			if bad(imp) {
				var path []string
				for at := imp; at != ""; at = prev[at] {
					path = append([]string{m.rel(at)}, path...)
				}
				return path
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

// forbidden lists, for package p, each of its own imports through which it
// reaches a package satisfying bad, as an import chain: one line per import
// to remove, however many forbidden packages lie behind it. An import that
// is itself in the rule's scope (inScope) is skipped: it is reported as a
// package of its own, so each broken rule is reported where it is broken.
func (m *module) forbidden(p *goPackage, bad, inScope func(string) bool) [][]string {
	if !slices.ContainsFunc(p.Deps, bad) {
		return nil
	}
	var out [][]string
	for _, imp := range p.Imports {
		if _, inModule := m.pkgs[imp]; !inModule {
			continue
		}
		var c []string
		switch {
		case bad(imp):
			c = []string{m.rel(imp)}
		case inScope(imp):
			continue
		default:
			if c = m.chain(imp, bad); c == nil {
				continue
			}
		}
		out = append(out, append([]string{m.rel(p.ImportPath)}, c...))
	}
	return out
}

func sortedPkgs(m *module) []*goPackage {
	var out []*goPackage
	for _, p := range m.pkgs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *goPackage) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return out
}

// TestSimulatorsDoNotImportDriver: a simulator that shares code with the
// client it stands in for proves nothing (docs/design.md). Its tests must not
// import driver/ either; lab/ may (lab starts the driver), so a simulator's
// tests reach the driver only through the lab, never directly.
func TestSimulatorsDoNotImportDriver(t *testing.T) {
	m := loadModule(t)
	inDriver := func(ip string) bool { return m.under(ip, "driver") }
	inScope := func(ip string) bool { return m.under(ip, "simulators") }
	checked := 0
	for _, p := range sortedPkgs(m) {
		if !inScope(p.ImportPath) {
			continue
		}
		checked++
		for _, c := range m.forbidden(p, inDriver, inScope) {
			t.Errorf("%s imports %s (%s): simulators never import driver/ (docs/design.md); "+
				"give the simulator its own code for it, or move shared, driver-independent code under simulators/",
				m.rel(p.ImportPath), c[len(c)-1], strings.Join(c, " → "))
		}
		for _, imp := range append(slices.Clone(p.TestImports), p.XTestImports...) {
			if inDriver(imp) {
				t.Errorf("the tests of %s import %s: simulator tests check the simulator against its specification, not against switchyard's client; "+
					"test the pair from sanity/ or lab/ instead", m.rel(p.ImportPath), m.rel(imp))
			}
		}
	}
	if checked == 0 {
		t.Fatal("go list found no package under simulators/: the test reads the wrong module")
	}
}

// TestDriverDoesNotImportSimulatorsOrLab: the production driver (driver/
// and the cmd/switchyard binary) never links a simulator or the lab. Test
// files may: a backend's behaviour tests start a simulated host from
// lab/<x>host, and that code is not in the binary.
func TestDriverDoesNotImportSimulatorsOrLab(t *testing.T) {
	m := loadModule(t)
	bad := func(ip string) bool { return m.under(ip, "simulators") || m.under(ip, "lab") }
	inScope := func(ip string) bool { return m.under(ip, "driver") || m.rel(ip) == "cmd/switchyard" }
	for _, p := range sortedPkgs(m) {
		if !inScope(p.ImportPath) {
			continue
		}
		for _, c := range m.forbidden(p, bad, inScope) {
			t.Errorf("%s imports %s (%s): driver/ never imports simulators/ or lab/ (docs/design.md); "+
				"only _test.go files may (to start a simulated host), so move that use into a test file",
				m.rel(p.ImportPath), c[len(c)-1], strings.Join(c, " → "))
		}
	}
}

// families are the backend packages: each package driver/allbackends
// imports, with its subpackages (driver/infinia/api belongs to
// driver/infinia). An import of allbackends below another one's directory
// belongs to the outer family.
type families struct {
	m     *module
	roots []string // import paths
}

func backendFamilies(t *testing.T, m *module) families {
	t.Helper()
	ab := m.pkgs[m.abs("driver/allbackends")]
	if ab == nil {
		t.Fatal("go list does not list driver/allbackends")
	}
	var roots []string
	for _, imp := range ab.Imports {
		if _, inModule := m.pkgs[imp]; inModule {
			roots = append(roots, imp)
		}
	}
	if len(roots) == 0 {
		t.Fatal("driver/allbackends imports no package of this module: no backend would be linked into the binaries")
	}
	var outer []string
	for _, r := range roots {
		nested := slices.ContainsFunc(roots, func(o string) bool { return o != r && strings.HasPrefix(r, o+"/") })
		if !nested {
			outer = append(outer, r)
		}
	}
	slices.Sort(outer)
	return families{m: m, roots: outer}
}

// of is the backend family of importPath, or "" for a shared package.
func (f families) of(importPath string) string {
	for _, r := range f.roots {
		if importPath == r || strings.HasPrefix(importPath, r+"/") {
			return r
		}
	}
	return ""
}

// TestBackendsDoNotImportEachOther: a backend package (and its
// subpackages) never imports another backend. Code two backends need lives
// in a shared package: driver/zfs (and driver/zfs/engine, the ZFS
// controller engine), driver/node, driver/csi, driver/backend,
// driver/config, driver/volumecontext, driver/volumeid, driver/keylock.
func TestBackendsDoNotImportEachOther(t *testing.T) {
	m := loadModule(t)
	fam := backendFamilies(t, m)
	for _, p := range sortedPkgs(m) {
		own := fam.of(p.ImportPath)
		if own == "" {
			continue
		}
		other := func(ip string) bool { f := fam.of(ip); return f != "" && f != own }
		same := func(ip string) bool { return fam.of(ip) == own }
		for _, c := range m.forbidden(p, other, same) {
			t.Errorf("backend %s imports backend %s (%s): backends never import each other (docs/design.md); "+
				"move what both need into a shared package (driver/zfs/..., driver/node, driver/backend, driver/volumecontext, ...) and import that from both",
				m.rel(p.ImportPath), m.rel(fam.of(m.abs(c[len(c)-1]))), strings.Join(c, " → "))
		}
	}
}

// TestSharedPackagesDoNotImportBackends: the packages under driver/ that
// are not backends serve every backend, so none of them links one; only
// driver/allbackends does (and cmd/switchyard links that).
func TestSharedPackagesDoNotImportBackends(t *testing.T) {
	m := loadModule(t)
	fam := backendFamilies(t, m)
	isBackend := func(ip string) bool { return fam.of(ip) != "" }
	shared := func(ip string) bool {
		return m.under(ip, "driver") && m.rel(ip) != "driver/allbackends" && !isBackend(ip)
	}
	for _, p := range sortedPkgs(m) {
		r := m.rel(p.ImportPath)
		if !shared(p.ImportPath) {
			continue
		}
		for _, c := range m.forbidden(p, isBackend, shared) {
			t.Errorf("shared package %s imports backend %s (%s): only driver/allbackends links backends; "+
				"reach the backend through the registry (backend.Type, backend.Options) or move the code into a shared package",
				r, c[len(c)-1], strings.Join(c, " → "))
		}
	}
}

// registerCalls returns where the non-test files of p call
// <driver/backend>.Register ("driver.go:44"), under whatever name the file
// imports driver/backend.
func registerCalls(t *testing.T, m *module, p *goPackage) []string {
	t.Helper()
	backendPath := m.abs("driver/backend")
	var at []string
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", filepath.Join(p.Dir, name), err)
		}
		local := ""
		for _, spec := range f.Imports {
			if path, _ := strconv.Unquote(spec.Path.Value); path == backendPath {
				local = "backend"
				if spec.Name != nil {
					local = spec.Name.Name
				}
			}
		}
		if local == "" || local == "_" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Register" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				pos := fset.Position(call.Pos())
				at = append(at, fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line))
			}
			return true
		})
	}
	return at
}

// TestEveryBackendIsLinked: a package under driver/ that registers driver
// types is linked by driver/allbackends, and cmd/switchyard links
// driver/allbackends. A backend that is not linked compiles and passes its
// own tests but is missing from the binary: its driver type is "unknown".
func TestEveryBackendIsLinked(t *testing.T) {
	m := loadModule(t)
	allbackends := m.abs("driver/allbackends")
	ab := m.pkgs[allbackends]
	if ab == nil {
		t.Fatal("go list does not list driver/allbackends")
	}
	registering := 0
	for _, p := range sortedPkgs(m) {
		if !m.under(p.ImportPath, "driver") || m.rel(p.ImportPath) == "driver/backend" {
			continue
		}
		calls := registerCalls(t, m, p)
		if len(calls) == 0 {
			continue
		}
		registering++
		if !slices.Contains(ab.Deps, p.ImportPath) {
			t.Errorf("%s registers driver types (backend.Register at %s) but driver/allbackends does not link it: "+
				"add `_ %q` to the imports of driver/allbackends/allbackends.go",
				m.rel(p.ImportPath), strings.Join(calls, ", "), p.ImportPath)
		}
	}
	if registering == 0 {
		t.Error("found no call of backend.Register in any package under driver/: either no backend is left or this test no longer recognises the call")
	}
	// The other way round: every backend allbackends links registers a
	// driver type (itself or in a subpackage), or the binary links code no
	// config can ever name.
	for _, root := range backendFamilies(t, m).roots {
		found := false
		for _, p := range sortedPkgs(m) {
			if (p.ImportPath == root || strings.HasPrefix(p.ImportPath, root+"/")) && len(registerCalls(t, m, p)) > 0 {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s is linked by driver/allbackends but registers no driver type: call backend.Register(backend.Type{...}) from an init func in the package (docs/developing.md, \"Adding a backend\", step 3)", m.rel(root))
		}
	}
	sw := m.pkgs[m.abs("cmd/switchyard")]
	switch {
	case sw == nil:
		t.Error("go list does not list cmd/switchyard, the driver binary")
	case !slices.Contains(sw.Deps, allbackends):
		t.Errorf("cmd/switchyard does not link driver/allbackends, so the binary knows no driver type: "+
			"add `_ %q` to the imports of cmd/switchyard/main.go", allbackends)
	}
}

// TestFullBuildRegistersEveryPlannedType: every democratic-csi driver type
// on backend.Planned() is served by the full build; only a trimmed build
// answers "not available in this build".
func TestFullBuildRegistersEveryPlannedType(t *testing.T) {
	names := backend.Names()
	if len(names) == 0 {
		t.Fatal("importing driver/allbackends registered no driver type")
	}
	for _, n := range backend.Planned() {
		if !slices.Contains(names, n) {
			t.Errorf("driver type %q of democratic-csi's list is not registered by the full build: import its backend in driver/allbackends", n)
		}
	}
}

// TestRegisteredTypesHaveDocs: every registered driver type (aliases too)
// is named, in backquotes as `<type>`, on a page under docs/backends/, and
// every such page is linked from the docs index, docs/README.md.
func TestRegisteredTypesHaveDocs(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "backends", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatalf("no page under %s", filepath.Join(root, "docs", "backends"))
	}
	text := map[string]string{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text[filepath.Base(p)] = string(b)
	}
	for _, n := range backend.Names() {
		found := false
		for _, s := range text {
			if strings.Contains(s, "`"+n+"`") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("driver type %q is registered but no page under docs/backends/ names it as `%s`: "+
				"document it in docs/backends/<backend>.md (a new backend gets its own page, linked from docs/README.md)", n, n)
		}
	}
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		link := "(backends/" + filepath.Base(p) + ")"
		if !strings.Contains(string(index), link) {
			t.Errorf("docs/backends/%s is not linked from the docs index: add a row with [backends/%s]%s to the table in docs/README.md",
				filepath.Base(p), filepath.Base(p), link)
		}
	}
}
