package main

import (
	"fmt"
	"sort"
	"strings"
)

// flatField is one field of an attribute's Layout: a field of its own, or
// a field of an attribute it embeds, renamed "Embed.Field" and moved to
// the embedding attribute's offsets. For SA attributes it carries the
// component mask bits that select it and the names that find it.
type flatField struct {
	Name, JSON, Label   string
	Offset, Width, Dump int
	Format              string
	Member              string   // python-rdma's member name, dotted
	Names               []string // lower-case names Layout.Component finds it by
	Mask                uint64   // component mask bits; 0 outside SA attributes
	Kind                string   // how SATemplate parses a value: kindUint, ...
	line                int
}

// checkComponents checks what the component options say, for every
// attribute: SA attributes give every field its bits, an embedded
// attribute gives all its fields bits or none, embedding names a known
// attribute of the right size, and no two members of a record share a
// name.
func checkComponents(attrs []*attr) error {
	byName := attrsByName(attrs)
	for _, a := range attrs {
		if err := checkBlocks(a, byName); err != nil {
			return err
		}
		given := 0
		for _, f := range a.Fields {
			if f.Comp != nil {
				given++
			}
			if f.Embed == "" {
				continue
			}
			if !a.isRecord() {
				return fmt.Errorf("%d: %s.%s: only SA attributes (class sa) embed attributes", f.line, a.Name, f.Name)
			}
			e := byName[f.Embed]
			switch {
			case e == nil:
				return fmt.Errorf("%d: %s.%s: no attribute %s", f.line, a.Name, f.Name, f.Embed)
			case e.embeds():
				return fmt.Errorf("%d: %s.%s: %s embeds attributes itself", f.line, a.Name, f.Name, f.Embed)
			case e.size()*8 != f.Width:
				return fmt.Errorf("%d: %s.%s: %s is %d bits, not %d", f.line, a.Name, f.Name, f.Embed, e.size()*8, f.Width)
			}
		}
		switch {
		case a.isRecord() && given != len(a.Fields):
			return fmt.Errorf("%d: %s: every field of an SA attribute needs comp=", a.line, a.Name)
		case given != 0 && given != len(a.Fields):
			return fmt.Errorf("%d: %s: comp= on some fields but not all", a.line, a.Name)
		}
	}
	for _, a := range attrs {
		if a.isRecord() {
			if _, err := flatten(a, byName); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBlocks checks the attribute's block fields: at most one, naming an
// element attribute (ID "-") of a class like its own whose size, the
// stride, divides the block.
func checkBlocks(a *attr, byName map[string]*attr) error {
	n := 0
	for _, f := range a.Fields {
		if f.Block == "" {
			continue
		}
		n++
		e := byName[f.Block]
		switch {
		case n > 1:
			return fmt.Errorf("%d: %s: more than one block", f.line, a.Name)
		case a.isRecord():
			return fmt.Errorf("%d: %s.%s: SA attributes hold no blocks", f.line, a.Name, f.Name)
		case e == nil:
			return fmt.Errorf("%d: %s.%s: no attribute %s", f.line, a.Name, f.Name, f.Block)
		case e.ID >= 0 || e.Class != a.Class:
			return fmt.Errorf("%d: %s.%s: %s is not an element of its class (ID -)", f.line, a.Name, f.Name, f.Block)
		case e.blocks() != nil:
			return fmt.Errorf("%d: %s.%s: %s holds a block itself", f.line, a.Name, f.Name, f.Block)
		case e.size()*8*f.Count != f.Width:
			return fmt.Errorf("%d: %s.%s: %d elements of %d bytes are not %d bits", f.line, a.Name, f.Name, f.Count, e.size(), f.Width)
		}
	}
	return nil
}

// blocks returns the attribute's block field, or nil.
func (a *attr) blocks() *field {
	for i := range a.Fields {
		if a.Fields[i].Block != "" {
			return &a.Fields[i]
		}
	}
	return nil
}

func attrsByName(attrs []*attr) map[string]*attr {
	m := make(map[string]*attr, len(attrs))
	for _, a := range attrs {
		m[a.Name] = a
	}
	return m
}

// embeds reports whether the attribute holds another.
func (a *attr) embeds() bool {
	for _, f := range a.Fields {
		if f.Embed != "" {
			return true
		}
	}
	return false
}

// flatten lists the attribute's Layout fields: its own, and those of the
// attributes it embeds in their place.
func flatten(a *attr, byName map[string]*attr) ([]flatField, error) {
	var out []flatField
	seen := map[string]string{}
	add := func(ff flatField) error {
		for _, n := range ff.Names {
			if other, dup := seen[n]; dup {
				return fmt.Errorf("%d: %s: member name %q of %s is also %s's", ff.line, a.Name, n, ff.Name, other)
			}
			seen[n] = ff.Name
		}
		out = append(out, ff)
		return nil
	}
	for _, f := range a.Fields {
		if f.Block != "" {
			continue // its elements are Layout.Block's
		}
		if f.Embed == "" {
			ff := flatField{Name: f.Name, JSON: jsonName(f.Name), Label: f.Label, Offset: f.Offset, Width: f.Width,
				Dump: f.Dump, Format: f.Format, Member: member(f), Mask: bits(f.Comp, 0), Kind: kind(f), line: f.line}
			ff.Names = lowerSet(ff.Name, ff.JSON, ff.Member)
			if err := add(ff); err != nil {
				return nil, err
			}
			continue
		}
		e := byName[f.Embed]
		ranks := rankByOffset(e.Fields)
		for i, g := range e.Fields {
			comp := g.Comp
			if comp == nil {
				comp = []int{ranks[i]}
			}
			ff := flatField{Name: f.Name + "." + g.Name, JSON: jsonName(f.Name) + "." + jsonName(g.Name), Label: g.Label,
				Offset: f.Offset + g.Offset, Width: g.Width, Dump: f.Offset + g.Dump, Format: g.Format,
				Member: member(f) + "." + member(g), Mask: bits(comp, f.Comp[0]), Kind: kind(g), line: f.line}
			if ff.Mask == 0 {
				return nil, fmt.Errorf("%d: %s.%s: component bits past 63", f.line, a.Name, ff.Name)
			}
			var names []string
			for _, outer := range []string{f.Name, member(f)} {
				for _, inner := range []string{g.Name, jsonName(g.Name), member(g)} {
					names = append(names, outer+"."+inner)
				}
				if len(e.Fields) == 1 {
					// The attribute is its one field: "nodeDescription".
					names = append(names, outer)
				}
			}
			ff.Names = lowerSet(names...)
			if err := add(ff); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// rankByOffset returns each field's place in offset order.
func rankByOffset(fields []field) []int {
	order := make([]int, len(fields))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return fields[order[i]].Offset < fields[order[j]].Offset })
	ranks := make([]int, len(fields))
	for r, i := range order {
		ranks[i] = r
	}
	return ranks
}

// bits returns the mask of the component bits, each moved up by base; 0
// when one passes bit 63.
func bits(comp []int, base int) uint64 {
	var m uint64
	for _, b := range comp {
		if b+base > 63 {
			return 0
		}
		m |= 1 << (b + base)
	}
	return m
}

// member returns python-rdma's name of a field: its alias, or its Go name
// with the first letter in lower case unless an acronym starts it
// ("NodeGUID" gives "nodeGUID", "LID" and "MKey" stay).
func member(f field) string {
	if f.Alias != "" {
		return f.Alias
	}
	s := f.Name
	if len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z' {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// kind says how a value for the field is written.
func kind(f field) string {
	switch {
	case f.Type == "rdma.GUID":
		return "kindGUID"
	case f.Type == "rdma.GID":
		return "kindGID"
	case f.Format == "string":
		return "kindString"
	case f.Width > 64:
		return "kindBytes"
	}
	return "kindUint"
}

// lowerSet returns the names in lower case, each once, in order.
func lowerSet(names ...string) []string {
	var out []string
	for _, n := range names {
		n = strings.ToLower(n)
		dup := false
		for _, o := range out {
			dup = dup || o == n
		}
		if !dup {
			out = append(out, n)
		}
	}
	return out
}
