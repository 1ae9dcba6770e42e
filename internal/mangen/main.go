// Command mangen writes ibtool's man pages: ibtool(8) and one page per tool,
// named after the tool as operators call it through its symlink.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ibtool/ibtool/cmd"
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
	header := &doc.GenManHeader{Section: "8", Source: "ibtool", Manual: "InfiniBand diagnostics"}
	pages := append([]*cobra.Command{cmd.NewRootCommand(f)}, cmd.ToolCommands(f)...)
	for _, c := range pages {
		c.DisableAutoGenTag = true
		path := filepath.Join(dir, c.Name()+".8")
		w, err := os.Create(path)
		if err != nil {
			return err
		}
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
