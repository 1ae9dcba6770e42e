package madtext

import "github.com/ibtool/ibtool/pkg/mad"

// NotDisplayed stands in for a key in a dump when the keys are not asked
// for (infiniband-diags' -K).
const NotDisplayed = "<not displayed>"

// AppendPortInfo appends infiniband-diags' dump_portinfo of a: one
// "Label:....value" line per field, each after indent (saquery's
// PortInfoRecords are two tabs in), the M_Key shown as NotDisplayed
// unless showKeys.
func AppendPortInfo(b []byte, a *mad.PortInfo, indent string, showKeys bool) []byte {
	data := portInfoData(a)
	for _, f := range a.Layout().Fields {
		b = append(b, indent...)
		b = appendPortInfoLine(b, f, data[:], showKeys)
	}
	return b
}

// AppendPortInfoFields is AppendPortInfo of the fields named (Go names), in the
// order given, with no indent: ibportstate's show_port_info. A name that is
// not a PortInfo field is skipped.
func AppendPortInfoFields(b []byte, a *mad.PortInfo, names []string, showKeys bool) []byte {
	data := portInfoData(a)
	for _, name := range names {
		if f, ok := a.Layout().Field(name); ok {
			b = appendPortInfoLine(b, f, data[:], showKeys)
		}
	}
	return b
}

func portInfoData(a *mad.PortInfo) [64]byte {
	var buf [64]byte
	_, _ = a.AppendBinary(buf[:0])
	return buf
}

func appendPortInfoLine(b []byte, f mad.Field, data []byte, showKeys bool) []byte {
	b = AppendDotted(b, f.Label)
	if f.Name == "MKey" && !showKeys {
		b = append(b, NotDisplayed...)
	} else {
		b = f.AppendValue(b, data)
	}
	return append(b, '\n')
}
