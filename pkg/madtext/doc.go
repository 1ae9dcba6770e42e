// Package madtext prints MAD attributes as infiniband-diags prints them:
// libibmad's dotted "Label:.....value" lines (AppendDump, AppendFields,
// AppendDotted), dump_portinfo with its M_Key rule (AppendPortInfo), the
// hex of xdump (AppendXdump), a whole MAD with its headers (AppendMADDump),
// and the IBA names of libibmad's labels (FieldName).
//
// The values themselves, enum names included, are pkg/mad's (Field.
// AppendValue, Format.Text); this package lays them out. The protocol
// packages (pkg/mad, pkg/madrpc) do not import it; the tools and
// pkg/subnet's text forms do.
package madtext
