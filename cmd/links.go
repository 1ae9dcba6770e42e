package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

type linksOptions struct {
	dir    string
	target string // the ibtool binary the links point at
}

func newLinksCmd(f *cmdutil.Factory) *cobra.Command {
	o := &linksOptions{}
	c := &cobra.Command{
		Use:   "links DIR",
		Short: "create a symlink named after each tool in DIR",
		Long: "links creates DIR/TOOL -> ibtool for every tool, so 'perfquery 12 1' runs 'ibtool perfquery 12 1'.\n" +
			"Existing links to ibtool are replaced; any other file of a tool's name is left alone and nothing is created.",
		Args: cmdutil.ArgsRange(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o.dir = args[0]
			if o.target == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("finding the ibtool binary: %w", err)
				}
				o.target = exe
			}
			return makeLinks(f, o)
		},
	}
	c.Flags().StringVar(&o.target, "target", "", "binary the links point at (default: this ibtool)")
	return c
}

// makeLinks creates the symlinks, or none of them when a file of a tool's
// name exists that is not a link to the same ibtool.
func makeLinks(f *cmdutil.Factory, o *linksOptions) error {
	target, err := filepath.Abs(o.target)
	if err != nil {
		return err
	}
	want, err := filepath.EvalSymlinks(target)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", target, err)
	}
	if st, err := os.Stat(o.dir); err != nil || !st.IsDir() {
		return cmdutil.UsageErrorf("%s is not a directory", o.dir)
	}
	var conflicts []string
	var replace []string
	for _, t := range cmdutil.Tools() {
		p := filepath.Join(o.dir, t.Name)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if got, err := filepath.EvalSymlinks(p); err == nil && got == want {
				replace = append(replace, p)
				continue
			}
		}
		conflicts = append(conflicts, p)
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("refusing to overwrite files that are not links to %s: %s", want, strings.Join(conflicts, ", "))
	}
	for _, p := range replace {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	n := 0
	for _, t := range cmdutil.Tools() {
		if err := os.Symlink(target, filepath.Join(o.dir, t.Name)); err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(f.IO.ErrOut, "linked %d tools in %s to %s\n", n, o.dir, target)
	return nil
}
