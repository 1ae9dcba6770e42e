package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// tablePrinter is the one way ibtool prints new tabular views: aligned
// columns under an upper-case header on a terminal, tab-separated rows
// without a header when piped, so scripts can cut and awk them.
type tablePrinter struct {
	w      io.Writer
	tty    bool
	header []string
	rows   [][]string
}

// NewTable returns a printer writing to io.Out with the given column names.
func NewTable(s IOStreams, header ...string) *tablePrinter {
	return &tablePrinter{w: s.Out, tty: s.OutIsTTY, header: header}
}

// AddRow appends one row; missing cells print empty.
func (t *tablePrinter) AddRow(cells ...string) { t.rows = append(t.rows, cells) }

// Render writes the table.
func (t *tablePrinter) Render() error {
	if !t.tty {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(t.w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	// Columns two spaces apart, left-aligned; cells hold no tabs.
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	header := make([]string, len(t.header))
	for i, h := range t.header {
		header[i] = strings.ToUpper(h)
	}
	line := func(cells []string) {
		row := make([]string, len(t.header))
		copy(row, cells)
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "\t", " ")
		}
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(row, "\t"), "\t"))
	}
	line(header)
	for _, r := range t.rows {
		line(r)
	}
	return tw.Flush()
}
