package cmd

// listTools prints every tool with its summary, the output of "ibtool" alone.
func listTools(f *Factory) error {
	t := newTable(f.IO, "Tool", "Summary")
	for _, tool := range Tools() {
		t.AddRow(tool.Name, tool.Summary)
	}
	return t.Render()
}
