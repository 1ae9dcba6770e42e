package jsonkeys

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Paths returns the sorted, distinct paths of the document's leaves (values
// that are neither objects nor arrays) and of its empty objects and arrays:
// "result.entries[].cctShift", an array's elements as "[]", the document's
// own keys at the top.
func Paths(doc []byte) ([]string, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	seen := map[string]bool{}
	if err := walk(d, "", seen); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, fmt.Errorf("jsonkeys: more than one document")
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// walk consumes one value from d and records the paths under at.
func walk(d *json.Decoder, at string, seen map[string]bool) error {
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("jsonkeys: %w", err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		seen[at] = true
		return nil
	}
	empty := true
	for d.More() {
		empty = false
		next := at + "[]"
		if delim == '{' {
			k, err := d.Token()
			if err != nil {
				return fmt.Errorf("jsonkeys: %w", err)
			}
			next = k.(string)
			if at != "" {
				next = at + "." + next
			}
		}
		if err := walk(d, next, seen); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("jsonkeys: %w", err)
	}
	if empty {
		seen[at+map[json.Delim]string{'{': "{}", '[': "[]"}[delim]] = true
	}
	return nil
}

// Leaves returns the sorted, distinct paths of the leaves of a decoded JSON
// document (json.Unmarshal into an any): as Paths, but empty objects and
// arrays, having no leaves, give no path.
func Leaves(v any) []string {
	set := map[string]bool{}
	var walkValue func(path string, v any)
	walkValue = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walkValue(strings.TrimPrefix(path+"."+k, "."), e)
			}
		case []any:
			for _, e := range v {
				walkValue(path+"[]", e)
			}
		default:
			set[path] = true
		}
	}
	walkValue("", v)
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}
