// Command mangen writes ibtool's man pages: ibtool(8), one page per tool,
// named after the tool as operators call it through its symlink, and
// ibtool-exporter(8) for the exporter's own binary.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ibtool/ibtool/cmd"
	"github.com/ibtool/ibtool/cmd/exporter"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func main() {
	out := flag.String("out", "man", "directory for the pages")
	flag.Parse()
	if err := generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}

func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := cmd.NewFactory("dev")
	pages := append([]*cobra.Command{cmd.NewRootCommand(f)}, cmd.ToolCommands(f)...)
	pages = append(pages, exporter.Tool.New(f))
	for _, c := range pages {
		c.DisableAutoGenTag = true
		path := filepath.Join(dir, c.Name()+".8")
		w, err := os.Create(path)
		if err != nil {
			return err
		}
		// A header per page: GenMan fills an empty Title in the header it
		// is given, and a shared one titled every page after the first.
		header := &doc.GenManHeader{Section: "8", Source: "ibtool", Manual: "InfiniBand diagnostics"}
		err = doc.GenMan(c, header, w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}
