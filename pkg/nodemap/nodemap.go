package nodemap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// DefaultPath is where the tools look for a map when none is named.
const DefaultPath = "/etc/rdma/ib-node-name-map"

// Map maps node GUIDs to names. The nil *Map is an empty map.
type Map struct {
	names map[uint64]string
}

// ParseError reports a line that does not start with a GUID.
type ParseError struct {
	Path string
	Line int
	Text string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: want a GUID and a name, got %q", e.Path, e.Line, e.Text)
}

// Load reads the map at path. An empty path means DefaultPath when that
// file exists, and no map (nil, nil) when it does not.
func Load(path string) (*Map, error) {
	explicit := path != ""
	if !explicit {
		path = DefaultPath
	}
	f, err := os.Open(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("node name map: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a map; name names the source in errors. Each line is a GUID
// (0x and hex digits, or decimal) and a name, in quotes or up to a #;
// blank lines and lines starting with # are skipped.
func Parse(r io.Reader, name string) (*Map, error) {
	m := &Map{names: map[uint64]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimLeft(sc.Text(), " \t\r\v\f")
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, " \t\r\v\f#")
		if end < 0 {
			end = len(line)
		}
		guid, err := parseGUID(line[:end])
		if err != nil {
			return nil, &ParseError{Path: name, Line: n, Text: sc.Text()}
		}
		rest := strings.TrimLeft(line[end:], " \t\r\v\f")
		// The name is the first run of characters other than " and #,
		// as rdma-core's strtok(p, "\"#") takes it.
		rest = strings.TrimLeft(rest, "\"#")
		if i := strings.IndexAny(rest, "\"#"); i >= 0 {
			rest = rest[:i]
		}
		if rest != "" {
			m.names[guid] = rest
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// parseGUID reads 0x and hex digits, or decimal digits (a leading zero is
// not octal).
func parseGUID(s string) (uint64, error) {
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return strconv.ParseUint(h, 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// Len returns the number of names in the map.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.names)
}

// Name returns the map's name for guid, or else desc with unprintable
// bytes made spaces, as rdma-core's remap_node_name does.
func (m *Map) Name(guid uint64, desc string) string {
	if m != nil {
		if n, ok := m.names[guid]; ok {
			return n
		}
	}
	for i := 0; i < len(desc); i++ {
		if c := desc[i]; c < 0x20 || c > 0x7e {
			return printable(desc)
		}
	}
	return desc
}

// printable returns s with each byte outside printable ASCII replaced by
// a space.
func printable(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b)
}
