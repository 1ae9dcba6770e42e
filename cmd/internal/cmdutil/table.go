package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
)

// tablePrinter is the one way ibtool prints its own tabular views (the
// tool list, trace --summary): aligned columns under an upper-case header
// on a terminal, drawn by tablewriter; tab-separated rows without a header
// when piped, so scripts can cut and awk them. Views infiniband-diags has
// print its text, not a table.
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
	var buf bytes.Buffer
	tw := tablewriter.NewWriter(&buf)
	// Borderless, left-aligned columns two spaces apart, never wrapped:
	// the layout ibtool printed before tablewriter drew it.
	tw.SetBorder(false)
	tw.SetHeaderLine(false)
	tw.SetColumnSeparator("")
	tw.SetCenterSeparator("")
	tw.SetRowSeparator("")
	tw.SetNoWhiteSpace(true)
	tw.SetTablePadding("  ")
	tw.SetAutoWrapText(false)
	tw.SetAutoFormatHeaders(false)
	tw.SetHeaderAlignment(tablewriter.ALIGN_LEFT)
	tw.SetAlignment(tablewriter.ALIGN_LEFT)
	header := make([]string, len(t.header))
	for i, h := range t.header {
		header[i] = strings.ToUpper(h)
	}
	tw.SetHeader(header)
	for _, r := range t.rows {
		row := make([]string, len(t.header))
		copy(row, r)
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "\t", " ")
		}
		tw.Append(row)
	}
	tw.Render()
	// tablewriter pads the last column too; a terminal line ends at its
	// text.
	for line := range strings.Lines(buf.String()) {
		if _, err := io.WriteString(t.w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}
