// Command org_oracle_go prints, as JSON lines, every identifier of a folder of Go modules
// that the type checker resolves to an object declared in one of them: one line per object
// with its declaration site and its uses, paths relative to the folder.  It is the Go oracle
// of bench/org (issue 45): bench/graph/oracle_go over several modules at once, an import
// resolved by the longest module path (each go.mod's `module` line) that prefixes it, as a
// go.work holding every module would resolve it, offline.  Standard library only; packages
// from no module of the folder are left unresolved, so their objects never appear.
//
// Usage: go run . ROOT   (ROOT/*/go.mod: one module a folder, as bench/org lays a slice out)
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type site struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

type object struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	Def  site   `json:"def"`
	Uses []site `json:"uses"`
}

func main() {
	root, _ := filepath.Abs(os.Args[1])
	// module path -> its folder
	modules := map[string]string{}
	entries, _ := os.ReadDir(root)
	for _, entry := range entries {
		dir := filepath.Join(root, entry.Name())
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if !entry.IsDir() || err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "module ") {
				modules[strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`)] = dir
			}
		}
	}
	moduleOf := func(path string) (string, string) {
		best := ""
		for module := range modules {
			if (path == module || strings.HasPrefix(path, module+"/")) && len(module) > len(best) {
				best = module
			}
		}
		return best, modules[best]
	}
	fset := token.NewFileSet()
	fsetOf = fset
	// folder -> package name -> files (a folder holds its package and its _test package)
	folders := map[string]map[string][]*ast.File{}
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if info.IsDir() && path != root && (strings.HasPrefix(info.Name(), ".") || info.Name() == "testdata" || info.Name() == "vendor") {
			return filepath.SkipDir
		}
		if info.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil
		}
		dir := filepath.Dir(path)
		if folders[dir] == nil {
			folders[dir] = map[string][]*ast.File{}
		}
		folders[dir][file.Name.Name] = append(folders[dir][file.Name.Name], file)
		return nil
	})
	std := importer.ForCompiler(fset, "source", nil)
	checked := map[string]*types.Package{}
	objects := map[types.Object]*object{}
	var imp importerFunc
	var check func(dir, name string, files []*ast.File) *types.Package
	imp = func(path string) (*types.Package, error) {
		if module, moduleDir := moduleOf(path); module != "" {
			dir := filepath.Join(moduleDir, strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))
			for name, files := range folders[dir] {
				if !strings.HasSuffix(name, "_test") {
					return check(dir, name, nonTest(files)), nil
				}
			}
			return nil, fmt.Errorf("no package in %s", dir)
		}
		if !strings.Contains(strings.Split(path, "/")[0], ".") {
			return std.Import(path)
		}
		return nil, fmt.Errorf("in no module of the folder: %s", path)
	}
	check = func(dir, name string, files []*ast.File) *types.Package {
		key := dir + "#" + name + fmt.Sprint(len(files))
		if pkg, ok := checked[key]; ok {
			return pkg
		}
		info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		pkg, _ := conf.Check(name, fset, files, info)
		checked[key] = pkg
		for ident, obj := range info.Defs {
			if obj == nil || !inside(fset, obj, root) {
				continue
			}
			if _, ok := objects[obj]; !ok {
				objects[obj] = &object{Name: obj.Name(), Kind: kindOf(obj), Def: at(fset, ident.Pos(), root)}
			}
		}
		for ident, obj := range info.Uses {
			if obj == nil || !inside(fset, obj, root) {
				continue
			}
			entry, ok := objects[obj]
			if !ok {
				entry = &object{Name: obj.Name(), Kind: kindOf(obj), Def: at(fset, obj.Pos(), root)}
				objects[obj] = entry
			}
			entry.Uses = append(entry.Uses, at(fset, ident.Pos(), root))
		}
		return pkg
	}
	dirs := make([]string, 0, len(folders))
	for dir := range folders {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		for name, files := range folders[dir] {
			// the package with its in-package tests: the files a test-aware checker sees together
			check(dir, name, files)
		}
	}
	// A package checked alone (as an import) and with its tests yields two objects per
	// declaration: merge them by declaration site.
	merged := map[site]*object{}
	for _, entry := range objects {
		if known, ok := merged[entry.Def]; ok {
			known.Uses = append(known.Uses, entry.Uses...)
		} else {
			merged[entry.Def] = entry
		}
	}
	out := json.NewEncoder(os.Stdout)
	for _, entry := range merged {
		out.Encode(entry)
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func nonTest(files []*ast.File) []*ast.File {
	var kept []*ast.File
	for _, file := range files {
		if !strings.HasSuffix(fsetOf.Position(file.Package).Filename, "_test.go") {
			kept = append(kept, file)
		}
	}
	return kept
}

var fsetOf *token.FileSet

func inside(fset *token.FileSet, obj types.Object, root string) bool {
	if !obj.Pos().IsValid() {
		return false
	}
	return strings.HasPrefix(fset.Position(obj.Pos()).Filename, root+string(filepath.Separator))
}

func at(fset *token.FileSet, pos token.Pos, root string) site {
	p := fset.Position(pos)
	rel, _ := filepath.Rel(root, p.Filename)
	return site{Path: filepath.ToSlash(rel), Line: p.Line, Col: p.Column}
}

// kindOf names an object's kind as bench/org reports it: func, method, type, field, var,
// const; package names and labels are "other" (no tool is asked about them).
func kindOf(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return "method"
		}
		return "func"
	case *types.TypeName:
		return "type"
	case *types.Var:
		if o.IsField() {
			return "field"
		}
		return "var"
	case *types.Const:
		return "const"
	}
	return "other"
}
