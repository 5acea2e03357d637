package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEnvExampleDocumentsEveryVariable keeps .env.example true: every
// configuration variable a non-test source file names is listed there.
func TestEnvExampleDocumentsEveryVariable(t *testing.T) {
	root := filepath.Join("..", "..")
	example, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	nameRE := regexp.MustCompile(`"((?:SLEUTH|LLM|EMBED|QDRANT|SLACK|FEISHU)_[A-Z0-9_]+)"`)
	seen := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "deploy") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range nameRE.FindAllStringSubmatch(string(b), -1) {
			seen[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 20 {
		t.Fatalf("found only %d variables; is the walk reading the sources?", len(seen))
	}
	documented := func(name string) bool {
		return regexp.MustCompile(`(?m)^#?\s*` + name + `=`).Match(example)
	}
	for name, path := range seen {
		// NAME_FILE is the file form of a documented secret NAME.
		if !documented(name) && !documented(strings.TrimSuffix(name, "_FILE")) {
			t.Errorf("%s (read in %s) is not in .env.example", name, path)
		}
	}
}
