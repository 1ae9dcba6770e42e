package cmd

import "github.com/ibtool/ibtool/cmd/internal/cmdutil"

// listTools prints every tool with its summary, the output of "ibtool" alone.
func listTools(f *cmdutil.Factory) error {
	t := cmdutil.NewTable(f.IO, "Tool", "Summary")
	for _, tool := range cmdutil.Tools() {
		t.AddRow(tool.Name, tool.Summary)
	}
	return t.Render()
}
