package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tablePrinter is the one way ibtool prints new tabular views: aligned
// columns with a header on a terminal, tab-separated rows without a header
// when piped, so scripts can cut and awk them.
type tablePrinter struct {
	w      io.Writer
	tty    bool
	header []string
	rows   [][]string
}

// newTable returns a printer writing to io.Out with the given column names.
func newTable(s IOStreams, header ...string) *tablePrinter {
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
	tbl := tablewriter.NewTable(t.w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off, ShowTop: tw.Off, ShowBottom: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.On),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
	tbl.Header(toAny(t.header)...)
	for _, r := range t.rows {
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	return tbl.Render()
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
