package cmd

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFamiliesStandAlone checks that a tool family imports no other family:
// what two families share is cmdutil's or pkg/'s. A binary under cmd/
// (package main: cmd/ibtool-exporter) is no family; it links the family
// it runs.
func TestFamiliesStandAlone(t *testing.T) {
	const prefix = "github.com/ibtool/ibtool/cmd/"
	allowed := map[string]bool{prefix + "internal/cmdutil": true, prefix + "internal/cmdtest": true}
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	families := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" || d.Name() == "testdata" {
			continue
		}
		families++
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name.Name == "main" {
				continue
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, prefix) && !allowed[path] {
					t.Errorf("%s imports %s: families share code through cmdutil or pkg/, never another family", file, path)
				}
			}
		}
	}
	if families < 5 {
		t.Errorf("found %d tool families under cmd/, want the families of docs/architecture.md", families)
	}
}
