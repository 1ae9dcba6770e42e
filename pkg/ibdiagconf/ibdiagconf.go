package ibdiagconf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// DefaultPath is the file infiniband-diags reads before every tool's
// options.
const DefaultPath = "/etc/infiniband-diags/ibdiag.conf"

// maxLine is the longest line rdma-core's fgets into a 1024-byte buffer
// reads whole; a longer one it reads as several lines.
const maxLine = 1022

// Key is a setting ibdiag.conf can hold.
type Key uint

// The keys of rdma-core 44's ibdiag.conf.
const (
	KeyCA       Key = 1 << iota // CA: the local CA name (-C)
	KeyPort                     // Port: the local CA port (-P)
	KeyTimeout                  // timeout: per-MAD timeout in ms (-t)
	KeyMLXEPI                   // MLX_EPI: read MlnxExtPortInfo during discovery
	KeyMKey                     // m_key: the M_Key of SMPs (-y)
	KeySAKey                    // sa_key: the SM_Key of SA queries (--smkey)
	KeyNDFormat                 // nd_format: read, used by no tool of v44
)

// keys lists the keys in the order rdma-core tries them, which decides a
// name that starts with two of them.
var keys = []Key{KeyCA, KeyPort, KeyTimeout, KeyMLXEPI, KeyMKey, KeySAKey, KeyNDFormat}

// String returns the key as the file spells it.
func (k Key) String() string {
	switch k {
	case KeyCA:
		return "CA"
	case KeyPort:
		return "Port"
	case KeyTimeout:
		return "timeout"
	case KeyMLXEPI:
		return "MLX_EPI"
	case KeyMKey:
		return "m_key"
	case KeySAKey:
		return "sa_key"
	case KeyNDFormat:
		return "nd_format"
	}
	return fmt.Sprintf("Key(%d)", uint(k))
}

// Settings are what one or more ibdiag.conf files set. A field counts only
// where Has says its key was in a file.
type Settings struct {
	CA        string
	Port      int    // 0 to 255; 0: the first active port
	TimeoutMS int    // 0: the tool's default
	MLXEPI    bool   // MLX_EPI; without the key, discovery reads it
	MKey      uint64 // m_key
	SAKey     uint64 // sa_key
	NDFormat  string // nd_format
	// Lines holds "path:line" of the line that set each key; a key
	// not in it no file set.
	Lines map[Key]string
}

// Has reports whether a file set k.
func (s *Settings) Has(k Key) bool { return s.Lines[k] != "" }

// Where returns "path:line" of the line that set k, or "" when none did.
func (s *Settings) Where(k Key) string { return s.Lines[k] }

// LineError reports a line of an ibdiag.conf that is malformed or that
// infiniband-diags would read otherwise than its text says.
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

// Unwrap returns what is wrong with the line.
func (e *LineError) Unwrap() error { return e.Err }

// Load reads the file at path over s: a key it sets replaces what s
// holds, the others stay, as infiniband-diags reads -z's file over the
// default one. A missing file is an error wrapping fs.ErrNotExist.
func (s *Settings) Load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	return s.Parse(f, path)
}

// Parse reads an ibdiag.conf from r over s; name names it in errors. On
// an error s holds what came before the bad line.
func (s *Settings) Parse(r io.Reader, name string) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		text := strings.TrimSuffix(line, "\n")
		if len(text) > maxLine {
			return &LineError{Path: name, Line: n, Err: fmt.Errorf("line longer than %d bytes", maxLine)}
		}
		if err := s.parseLine(text, fmt.Sprintf("%s:%d", name, n)); err != nil {
			return &LineError{Path: name, Line: n, Err: err}
		}
	}
}

// parseLine reads one line (without its newline) into s.
func (s *Settings) parseLine(text, where string) error {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" || trimmed[0] == '#' {
		return nil // infiniband-diags skips these or takes them for unknown keys
	}
	name, value, ok := strings.Cut(text, "=")
	if !ok {
		return fmt.Errorf("want KEY=VALUE, got %q", text)
	}
	if name == "" {
		return fmt.Errorf("no key before '=' in %q", text)
	}
	if name != strings.TrimLeft(name, " \t") {
		// rdma-core compares from the line's first byte, so it
		// ignores the line whatever key follows.
		return fmt.Errorf("blanks before the key in %q: infiniband-diags ignores this line", text)
	}
	name = strings.TrimRight(name, " \t")
	k, exact := lookup(name)
	if k == 0 {
		return nil // an unknown key: infiniband-diags ignores it too
	}
	if !exact {
		return fmt.Errorf("unknown key %q: infiniband-diags reads it as %s", name, k)
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return fmt.Errorf("%s has no value", k)
	}
	if err := s.set1(k, value); err != nil {
		return fmt.Errorf("%s=%s: %w", k, value, err)
	}
	if s.Lines == nil {
		s.Lines = map[Key]string{}
	}
	s.Lines[k] = where
	return nil
}

// lookup finds the key rdma-core would take name for (a key name starts
// it) and whether name is exactly that key.
func lookup(name string) (Key, bool) {
	for _, k := range keys {
		if strings.HasPrefix(name, k.String()) {
			return k, name == k.String()
		}
	}
	return 0, false
}

// set1 parses value into k's field.
func (s *Settings) set1(k Key, value string) error {
	var err error
	switch k {
	case KeyCA:
		if strings.ContainsAny(value, " \t") {
			return errors.New("a CA name has no blanks")
		}
		s.CA = value
	case KeyPort:
		var n uint64
		n, err = parseNumber(value, 255)
		s.Port = int(n)
	case KeyTimeout:
		var n uint64
		n, err = parseNumber(value, math.MaxInt32)
		s.TimeoutMS = int(n)
	case KeyMLXEPI:
		s.MLXEPI, err = parseBool(value)
	case KeyMKey:
		s.MKey, err = parseNumber(value, math.MaxUint64)
	case KeySAKey:
		s.SAKey, err = parseNumber(value, math.MaxUint64)
	case KeyNDFormat:
		s.NDFormat = value
	}
	return err
}

// parseNumber parses a number as strtoul(s, NULL, 0) reads one where the
// two agree: decimal, or 0x and hex digits. A leading 0 (octal to strtoul)
// is refused, as the command line's numbers are decimal.
func parseNumber(s string, max uint64) (uint64, error) {
	base, digits := 10, s
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		base, digits = 16, s[2:]
	} else if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("a leading 0 makes it octal to infiniband-diags: write it in decimal or 0x hex")
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, errors.New("want a decimal number or 0x and hex digits")
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("out of range 0 to %d", max)
		}
		return 0, errors.New("want a decimal number or 0x and hex digits")
	}
	if n > max {
		return 0, fmt.Errorf("out of range 0 to %d", max)
	}
	return n, nil
}

// parseBool takes what rdma-core reads as true (text starting TRUE or
// true) and as false where they agree: rdma-core reads any other text,
// "True" and "1" among them, as false.
func parseBool(s string) (bool, error) {
	switch s {
	case "true", "TRUE":
		return true, nil
	case "false", "FALSE":
		return false, nil
	}
	return false, errors.New("want true or false (infiniband-diags reads anything but true as false)")
}
