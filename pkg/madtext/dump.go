package madtext

import "github.com/ibtool/ibtool/pkg/mad"

// labelWidth is the column libibmad pads labels to with dots.
const labelWidth = 32

// AppendDotted appends "Label:" and dots up to libibmad's column, the
// layout of mad_dump_field and of smpquery's own lines.
func AppendDotted(b []byte, label string) []byte {
	b = append(b, label...)
	b = append(b, ':')
	for n := labelWidth - len(label); n > 0; n-- {
		b = append(b, '.')
	}
	return b
}

// AppendFields appends one "Label:.....value" line per field that has a
// label, as libibmad's _dump_fields does.
func AppendFields(b []byte, fields []mad.Field, data []byte) []byte {
	for _, f := range fields {
		if f.Label == "" {
			continue
		}
		b = AppendDotted(b, f.Label)
		b = f.AppendValue(b, data)
		b = append(b, '\n')
	}
	return b
}

// AppendDump appends libibmad's dotted dump of data, an encoding of l's
// attribute: one "Label:....value" line per field it prints.
func AppendDump(b []byte, l *mad.Layout, data []byte) []byte {
	return AppendFields(b, l.Fields, data)
}
