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
	line   int
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
	line   int
}

// size returns the attribute's length in bytes: up to its last field.
func (a *attr) size() int {
	n := 0
	for _, f := range a.Fields {
		n = max(n, (f.Offset+f.Width+7)/8, (f.Dump+f.Width+7)/8)
	}
	return n
}

var classes = map[string]string{"smp": "ClassSMI", "pma": "ClassPerf", "cc": "ClassCC"}

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

// parse reads the table. Errors name the line: "12: ...".
func parse(src string) ([]*attr, error) {
	var attrs []*attr
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
			continue
		}
		if len(attrs) == 0 {
			return nil, fmt.Errorf("%d: field before the first attr line", n)
		}
		a := attrs[len(attrs)-1]
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
	}
	return attrs, nil
}

func parseAttr(words []string, n int) (*attr, error) {
	if len(words) != 4 {
		return nil, fmt.Errorf("%d: want: attr <Name> <class> <ID|->", n)
	}
	a := &attr{Name: words[1], ID: -1, line: n}
	if !goIdent.MatchString(a.Name) {
		return nil, fmt.Errorf("%d: attribute name %q is not an exported Go name", n, a.Name)
	}
	var ok bool
	if a.Class, ok = classes[words[2]]; !ok {
		return nil, fmt.Errorf("%d: unknown class %q (smp, pma, cc)", n, words[2])
	}
	if words[3] != "-" {
		id, err := strconv.ParseUint(words[3], 0, 16)
		if err != nil {
			return nil, fmt.Errorf("%d: attribute ID %q: want a 16-bit number or -", n, words[3])
		}
		a.ID = int(id)
	}
	return a, nil
}

func parseField(words []string, n int) (field, error) {
	if len(words) < 5 {
		return field{}, fmt.Errorf("%d: want: <GoName> <offset> <width> <format> <label> [type=T] [dump=OFF]", n)
	}
	f := field{Name: words[0], Format: words[3], Label: words[4], line: n}
	if !goIdent.MatchString(f.Name) {
		return f, fmt.Errorf("%d: field name %q is not an exported Go name", n, f.Name)
	}
	var err error
	if f.Offset, err = strconv.Atoi(words[1]); err != nil || f.Offset < 0 {
		return f, fmt.Errorf("%d: offset %q: want bits from the start", n, words[1])
	}
	if f.Width, err = strconv.Atoi(words[2]); err != nil || f.Width <= 0 {
		return f, fmt.Errorf("%d: width %q: want a positive number of bits", n, words[2])
	}
	if _, ok := formats[f.Format]; !ok {
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
			f.Type = v
		case "dump":
			if f.Dump, err = strconv.Atoi(v); err != nil || f.Dump < 0 {
				return f, fmt.Errorf("%d: dump offset %q", n, v)
			}
		default:
			return f, fmt.Errorf("%d: unknown option %q", n, opt)
		}
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
