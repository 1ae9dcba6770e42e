package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// attr is one attribute of the table.
type attr struct {
	Name   string
	Class  string // Go constant of the management class
	ID     int    // -1: an element of a block, no attribute ID
	Fields []field
	// Size is the length size= gives, in bytes; 0 when the attribute ends
	// with its last field.
	Size int
	// NoConst is set by const=no: Attr<Name> is declared by hand.
	NoConst bool
	line    int
}

// field is one field line of the table.
type field struct {
	Name   string
	Offset int // bits, IBA order
	Width  int // bits
	Format string
	Label  string // "" when not dumped
	Type   string // Go type
	Dump   int    // the offset libibmad reads for the dump
	// Embed names the attribute an "attr" field holds; Type is then its
	// struct and Comp its first component bit.
	Embed string
	// Comp lists the field's component mask bits (comp=N or comp=N,M);
	// nil when the line gives none.
	Comp []int
	// Alias is python-rdma's member name where it differs (alias=).
	Alias string
	// typed is set when the line gives type=.
	typed bool
	// Block names the element attribute of a "block" field, Count how
	// many elements it holds; Type is then [Count]Block.
	Block string
	Count int
	line  int
}

// size returns the attribute's length in bytes: up to its last field, or
// the size= the line gives.
func (a *attr) size() int {
	n := a.Size
	for _, f := range a.Fields {
		n = max(n, (f.Offset+f.Width+7)/8, (f.Dump+f.Width+7)/8)
	}
	return n
}

// isRecord reports whether the attribute is an SA attribute, whose fields
// carry component mask bits.
func (a *attr) isRecord() bool { return a.Class == "ClassSA" }

var classes = map[string]string{"smp": "ClassSMI", "pma": "ClassPerf", "cc": "ClassCC", "sa": "ClassSA",
	"mlx": "ClassMellanox", "ping": "ClassOpenIBPing", "sysstat": "ClassOpenIBSysstat"}

// isVendor reports whether the attribute is of a vendor class: its layout
// goes in VendorLayouts, out of the lists tools look standard attributes
// up in.
func (a *attr) isVendor() bool {
	switch a.Class {
	case "ClassMellanox", "ClassOpenIBPing", "ClassOpenIBSysstat":
		return true
	}
	return false
}

// formats maps the table's format names (libibmad's mad_dump_<name>) to
// pkg/mad's Format constants.
var formats = map[string]string{
	"uint":             "FormatUint",
	"hex":              "FormatHex",
	"rhex":             "FormatRHex",
	"nodetype":         "FormatNodeType",
	"string":           "FormatString",
	"array":            "FormatArray",
	"linkwidth":        "FormatLinkWidth",
	"linkwidthen":      "FormatLinkWidthEnabled",
	"linkwidthsup":     "FormatLinkWidthSupported",
	"linkspeed":        "FormatLinkSpeed",
	"linkspeeden":      "FormatLinkSpeedEnabled",
	"linkspeedsup":     "FormatLinkSpeedSupported",
	"linkspeedext":     "FormatLinkSpeedExt",
	"linkspeedextsup":  "FormatLinkSpeedExtSupported",
	"linkspeedexten":   "FormatLinkSpeedExtEnabled",
	"portstate":        "FormatPortState",
	"physportstate":    "FormatPhysPortState",
	"linkdowndefstate": "FormatLinkDownDefState",
	"mtu":              "FormatMTU",
	"vlcap":            "FormatVLCap",
	"opervls":          "FormatOperVLs",
	"portcapmask":      "FormatPortCapMask",
	"portcapmask2":     "FormatPortCapMask2",
}

var goIdent = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// fieldIdent also takes underscores, for the spec's numbered members
// (ServiceRecord's ServiceData8_0 ... ServiceData64_1).
var fieldIdent = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)

// memberIdent is a python-rdma member name.
var memberIdent = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// table is what the attribute table declares.
type table struct {
	Attrs []*attr
	Enums []*enum
}

// parse reads the table. Errors name the line: "12: ...".
func parse(src string) (*table, error) {
	var attrs []*attr
	var enums []*enum
	var cur *attr // the attribute field lines belong to
	names := map[string]bool{}
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		if words[0] == "enum" {
			e, err := parseEnum(words, n)
			if err != nil {
				return nil, err
			}
			enums = append(enums, e)
			cur = nil
			continue
		}
		if words[0] == "attr" {
			a, err := parseAttr(words, n)
			if err != nil {
				return nil, err
			}
			if names[a.Name] {
				return nil, fmt.Errorf("%d: attribute %s defined twice", n, a.Name)
			}
			names[a.Name] = true
			attrs = append(attrs, a)
			cur = a
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%d: field outside an attr", n)
		}
		a := cur
		f, err := parseField(words, n)
		if err != nil {
			return nil, err
		}
		for _, g := range a.Fields {
			if g.Name == f.Name {
				return nil, fmt.Errorf("%d: %s.%s defined twice", n, a.Name, f.Name)
			}
			if f.Offset < g.Offset+g.Width && g.Offset < f.Offset+f.Width {
				return nil, fmt.Errorf("%d: %s.%s overlaps %s", n, a.Name, f.Name, g.Name)
			}
		}
		a.Fields = append(a.Fields, f)
	}
	for _, a := range attrs {
		if len(a.Fields) == 0 {
			return nil, fmt.Errorf("%d: attribute %s has no fields", a.line, a.Name)
		}
		if a.Size != 0 && a.Size < a.size() {
			return nil, fmt.Errorf("%d: %s: size=%d, but its fields run to byte %d", a.line, a.Name, a.Size, a.size())
		}
	}
	if err := checkComponents(attrs); err != nil {
		return nil, err
	}
	if err := typeEnums(attrs, enums); err != nil {
		return nil, err
	}
	return &table{Attrs: attrs, Enums: enums}, nil
}

func parseAttr(words []string, n int) (*attr, error) {
	if len(words) < 4 {
		return nil, fmt.Errorf("%d: want: attr <Name> <class> <ID|-> [size=BYTES] [const=no]", n)
	}
	a := &attr{Name: words[1], ID: -1, line: n}
	if !goIdent.MatchString(a.Name) {
		return nil, fmt.Errorf("%d: attribute name %q is not an exported Go name", n, a.Name)
	}
	var ok bool
	if a.Class, ok = classes[words[2]]; !ok {
		return nil, fmt.Errorf("%d: unknown class %q (smp, pma, cc, sa, mlx, ping, sysstat)", n, words[2])
	}
	if words[3] != "-" {
		id, err := strconv.ParseUint(words[3], 0, 16)
		if err != nil {
			return nil, fmt.Errorf("%d: attribute ID %q: want a 16-bit number or -", n, words[3])
		}
		a.ID = int(id)
	}
	for _, opt := range words[4:] {
		k, v, _ := strings.Cut(opt, "=")
		switch {
		case k == "size":
			size, err := strconv.Atoi(v)
			if err != nil || size <= 0 {
				return nil, fmt.Errorf("%d: size %q: want a number of bytes", n, v)
			}
			a.Size = size
		case opt == "const=no":
			a.NoConst = true
		default:
			return nil, fmt.Errorf("%d: unknown option %q", n, opt)
		}
	}
	return a, nil
}

func parseField(words []string, n int) (field, error) {
	if len(words) < 5 {
		return field{}, fmt.Errorf("%d: want: <GoName> <offset> <width> <format> <label> [type=T] [dump=OFF] [comp=N] [alias=NAME]", n)
	}
	f := field{Name: words[0], Format: words[3], Label: words[4], line: n}
	if !fieldIdent.MatchString(f.Name) {
		return f, fmt.Errorf("%d: field name %q is not an exported Go name", n, f.Name)
	}
	var err error
	if f.Offset, err = strconv.Atoi(words[1]); err != nil || f.Offset < 0 {
		return f, fmt.Errorf("%d: offset %q: want bits from the start", n, words[1])
	}
	if f.Width, err = strconv.Atoi(words[2]); err != nil || f.Width <= 0 {
		return f, fmt.Errorf("%d: width %q: want a positive number of bits", n, words[2])
	}
	if f.Format == "attr" {
		f.Embed, f.Label = f.Label, ""
	} else if f.Format == "block" {
		f.Block, f.Label = f.Label, ""
	} else if _, ok := formats[f.Format]; !ok {
		return f, fmt.Errorf("%d: unknown format %q", n, f.Format)
	}
	if f.Label == "-" {
		f.Label = ""
	}
	f.Dump = f.Offset
	for _, opt := range words[5:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "type":
			f.Type, f.typed = v, true
		case "dump":
			if f.Dump, err = strconv.Atoi(v); err != nil || f.Dump < 0 {
				return f, fmt.Errorf("%d: dump offset %q", n, v)
			}
		case "comp":
			if f.Comp, err = parseComp(v); err != nil {
				return f, fmt.Errorf("%d: comp=%s: %v", n, v, err)
			}
		case "count":
			if f.Count, err = strconv.Atoi(v); err != nil || f.Count <= 0 {
				return f, fmt.Errorf("%d: count %q: want a number of elements", n, v)
			}
		case "alias":
			if !memberIdent.MatchString(v) {
				return f, fmt.Errorf("%d: alias %q is not a member name", n, v)
			}
			f.Alias = v
		default:
			return f, fmt.Errorf("%d: unknown option %q", n, opt)
		}
	}
	if f.Block != "" {
		switch {
		case f.Type != "" || f.Dump != f.Offset || f.Comp != nil:
			return f, fmt.Errorf("%d: %s: a block takes only count=", n, f.Name)
		case f.Offset%8 != 0 || f.Width%8 != 0:
			return f, fmt.Errorf("%d: %s: a block must be whole bytes", n, f.Name)
		case f.Count == 0 || f.Width%(8*f.Count) != 0:
			return f, fmt.Errorf("%d: %s: a block needs count=N, N elements of whole bytes", n, f.Name)
		}
		f.Type = fmt.Sprintf("[%d]%s", f.Count, f.Block)
		return f, nil
	}
	if f.Count != 0 {
		return f, fmt.Errorf("%d: %s: count= is for blocks", n, f.Name)
	}
	if f.Embed != "" {
		switch {
		case f.Type != "" || f.Dump != f.Offset:
			return f, fmt.Errorf("%d: %s: an embedded attribute takes no type= or dump=", n, f.Name)
		case f.Offset%8 != 0 || f.Width%8 != 0:
			return f, fmt.Errorf("%d: %s: an embedded attribute must be whole bytes", n, f.Name)
		case len(f.Comp) != 1:
			return f, fmt.Errorf("%d: %s: an embedded attribute needs comp=BASE, its first component bit", n, f.Name)
		}
		f.Type = f.Embed
		return f, nil
	}
	switch {
	case f.Width > 64:
		if f.Offset%8 != 0 || f.Width%8 != 0 {
			return f, fmt.Errorf("%d: %s: fields wider than 64 bits must be whole bytes", n, f.Name)
		}
		if f.Type == "" {
			f.Type = fmt.Sprintf("[%d]byte", f.Width/8)
		}
	case f.Offset%8+f.Width > 64:
		return f, fmt.Errorf("%d: %s spans more than 8 bytes", n, f.Name)
	case f.Type == "":
		f.Type = uintType(f.Width)
	}
	return f, nil
}

// parseComp reads comp=N or comp=N,M,...: component mask bits, 0 to 63.
func parseComp(v string) ([]int, error) {
	var bits []int
	for _, s := range strings.Split(v, ",") {
		b, err := strconv.Atoi(s)
		if err != nil || b < 0 || b > 63 {
			return nil, fmt.Errorf("want component bits 0 to 63")
		}
		bits = append(bits, b)
	}
	return bits, nil
}

// uintType returns the smallest unsigned type of at least width bits.
func uintType(width int) string {
	switch {
	case width <= 8:
		return "uint8"
	case width <= 16:
		return "uint16"
	case width <= 32:
		return "uint32"
	}
	return "uint64"
}

// jsonName turns a Go name into lowerCamelCase: the leading run of capitals
// in lower case, keeping the last one when a lower-case letter follows
// ("GUIDCap" gives "guidCap", "LID" gives "lid", "MKey" gives "mKey").
func jsonName(s string) string {
	run := 0
	for run < len(s) && s[run] >= 'A' && s[run] <= 'Z' {
		run++
	}
	switch {
	case run == 0:
		return s
	case run == len(s), run == 1:
		return strings.ToLower(s[:run]) + s[run:]
	case s[run] >= 'a' && s[run] <= 'z':
		return strings.ToLower(s[:run-1]) + s[run-1:]
	}
	return strings.ToLower(s[:run]) + s[run:]
}
