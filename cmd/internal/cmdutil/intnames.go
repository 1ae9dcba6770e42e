package cmdutil

import (
	"bytes"
	"io"
	"strings"

	"github.com/ibtool/ibtool/pkg/madtext"
)

// python-rdma's --int-names prints its fields by their internal (IBA)
// names, dotted to column 33 with no colon, instead of libibmad's labels
// (libibopts' format_args). ibtool's renderers print libibmad's labels;
// the run's output passes through a fieldNamer, which with --int-names
// rewrites each of libibmad's dotted lines ("BaseVers:........1") with
// the field's name ("BaseVersion......1") and leaves every other line.

// dottedColumn is where the value of a dotted line starts, in libibmad's
// format and python-rdma's alike.
const dottedColumn = 33

// dottedLine matches a libibmad dotted line: indent, label, colon, dots
// to dottedColumn, value.
var dottedLine = &LazyRegexp{Expr: `^(\t*)([^\t:]+):(\.+)(.*)$`}

// fieldNamer rewrites the dotted lines written through it when on.
type fieldNamer struct {
	w    io.Writer
	on   bool
	part []byte // a line not ended yet
}

func (n *fieldNamer) Write(p []byte) (int, error) {
	if !n.on {
		return n.w.Write(p)
	}
	n.part = append(n.part, p...)
	end := bytes.LastIndexByte(n.part, '\n')
	if end < 0 {
		return len(p), nil
	}
	out := intNames(n.part[:end+1])
	n.part = append(n.part[:0], n.part[end+1:]...)
	if _, err := n.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes a last line that had no newline.
func (n *fieldNamer) flush() {
	if len(n.part) > 0 {
		n.w.Write(intNames(n.part))
		n.part = n.part[:0]
	}
}

// intNames rewrites the dotted lines of text with the fields' names.
func intNames(text []byte) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	var b strings.Builder
	for _, line := range lines {
		body, nl := strings.CutSuffix(line, "\n")
		m := dottedLine.Get().FindStringSubmatch(body)
		name, ok := "", false
		if m != nil && len(m[2])+1+len(m[3]) == dottedColumn {
			name, ok = madtext.FieldName(m[2])
		}
		if !ok {
			b.WriteString(line)
			continue
		}
		b.WriteString(m[1])
		b.WriteString(name)
		b.WriteString(strings.Repeat(".", max(dottedColumn-len(name), 0)))
		b.WriteString(m[4])
		if nl {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}
