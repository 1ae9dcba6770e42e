package mad

// NotDisplayed stands in for a key in a dump when the keys are not asked
// for (infiniband-diags' -K).
const NotDisplayed = "<not displayed>"

// AppendDump appends infiniband-diags' dump_portinfo of the PortInfo: one
// "Label:....value" line per field, each after indent (saquery's
// PortInfoRecords are two tabs in), the M_Key shown as NotDisplayed
// unless showKeys.
func (a *PortInfo) AppendDump(b []byte, indent string, showKeys bool) []byte {
	var buf [64]byte
	data, _ := a.AppendBinary(buf[:0])
	for _, f := range layoutPortInfo.Fields {
		b = append(b, indent...)
		b = AppendDotted(b, f.Label)
		if f.Name == "MKey" && !showKeys {
			b = append(b, NotDisplayed...)
		} else {
			b = f.AppendValue(b, data)
		}
		b = append(b, '\n')
	}
	return b
}
