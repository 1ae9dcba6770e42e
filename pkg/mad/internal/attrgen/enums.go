package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// enum is one enum line of the table: a Go type for the values of a
// format, its named values, and for a set of values, the enum its bits
// are.
type enum struct {
	Name   string
	Format string
	Of     string // set=: the enum whose values the set's bits are
	Values []enumValue
	// Fields are the fields typed with the enum, "Attr.Field".
	Fields []string
	line   int
}

// enumValue is one named value: the constant <Enum><Name>.
type enumValue struct {
	Name  string
	Value int
}

// valueIdent is what follows the type's name in a constant's name: "CA",
// "4X", "256".
var valueIdent = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// parseEnum reads "enum <Type> <format> [set=<Enum>] [<Name>=<value> ...]".
func parseEnum(words []string, n int) (*enum, error) {
	if len(words) < 3 {
		return nil, fmt.Errorf("%d: want: enum <Type> <format> [set=<Enum>] [<Name>=<value> ...]", n)
	}
	e := &enum{Name: words[1], Format: words[2], line: n}
	if !goIdent.MatchString(e.Name) {
		return nil, fmt.Errorf("%d: enum name %q is not an exported Go name", n, e.Name)
	}
	if _, ok := formats[e.Format]; !ok {
		return nil, fmt.Errorf("%d: unknown format %q", n, e.Format)
	}
	for _, w := range words[3:] {
		k, v, ok := strings.Cut(w, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("%d: %q: want <Name>=<value> or set=<Enum>", n, w)
		case k == "set":
			e.Of = v
		case !valueIdent.MatchString(k):
			return nil, fmt.Errorf("%d: value name %q: want letters and digits", n, k)
		default:
			x, err := strconv.ParseUint(v, 0, 8)
			if err != nil {
				return nil, fmt.Errorf("%d: %s=%s: want an 8-bit number", n, k, v)
			}
			e.Values = append(e.Values, enumValue{Name: k, Value: int(x)})
		}
	}
	return e, nil
}

// typeEnums checks the enums and gives each field of an enum's format,
// no wider than 8 bits and without type=, the enum's type.
func typeEnums(attrs []*attr, enums []*enum) error {
	byFormat := map[string]*enum{}
	byName := map[string]*enum{}
	for _, e := range enums {
		if byName[e.Name] != nil {
			return fmt.Errorf("%d: enum %s defined twice", e.line, e.Name)
		}
		if g := byFormat[e.Format]; g != nil {
			return fmt.Errorf("%d: format %s already has enum %s", e.line, e.Format, g.Name)
		}
		byName[e.Name], byFormat[e.Format] = e, e
	}
	for _, e := range enums {
		if e.Of == "" {
			continue
		}
		if of := byName[e.Of]; of == nil || of.Of != "" {
			return fmt.Errorf("%d: %s: set=%s names no enum of single values", e.line, e.Name, e.Of)
		}
	}
	for _, a := range attrs {
		for i, f := range a.Fields {
			if e := byFormat[f.Format]; e != nil && !f.typed && f.Width <= 8 {
				a.Fields[i].Type = e.Name
				e.Fields = append(e.Fields, a.Name+"."+f.Name)
			}
		}
	}
	return nil
}

// genEnums writes the enum types, their constants and their String
// methods, which print what the dumper prints for the format.
func genEnums(b *bytes.Buffer, enums []*enum) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	for _, e := range enums {
		f := formats[e.Format]
		if e.Of != "" {
			p("// %s is a set of %s values, one bit each (%s format).\n", e.Name, e.Of, e.Format)
		} else {
			p("// %s is a value of the %s format.\n", e.Name, e.Format)
		}
		if len(e.Fields) > 0 {
			p("// It is the type of %s.\n", strings.Join(e.Fields, ", "))
		}
		p("type %s uint8\n\n", e.Name)
		if len(e.Values) > 0 {
			p("// %s values.\nconst (\n", e.Name)
			for _, v := range e.Values {
				p("\t%s%s %s = %d\n", e.Name, v.Name, e.Name, v.Value)
			}
			p(")\n\n")
		}
		p("// String returns the value as libibmad's dump prints it (%s).\n", strings.TrimPrefix(f, "Format"))
		p("func (v %s) String() string { return %s.Text(uint32(v)) }\n\n", e.Name, f)
		if e.Of != "" {
			p("// Has reports whether w is in the set.\n")
			p("func (v %s) Has(w %s) bool { return uint8(v)&uint8(w) != 0 }\n\n", e.Name, e.Of)
		}
	}
}
