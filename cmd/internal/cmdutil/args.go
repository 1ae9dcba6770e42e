package cmdutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// Parsers of the numbers tools take as arguments: decimal or 0x hex, never
// octal, each with its range.

// ParsePortNumber parses a port number argument: decimal (a leading zero
// is still decimal) or 0x hex.
func ParsePortNumber(s string) (int, error) {
	var n uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err = strconv.ParseUint(h, 16, 31)
	} else {
		n, err = strconv.ParseUint(s, 10, 31)
	}
	if err != nil || s == "" || s[0] == '+' {
		return 0, UsageErrorf("invalid port number %q: want a decimal number or 0x and hex digits", s)
	}
	return int(n), nil
}

// ParseUintArg parses a decimal or 0x hex number up to max.
func ParseUintArg(s string, max uint64) (uint64, error) {
	base := 10
	digits := s
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		base, digits = 16, s[2:]
	}
	if digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, fmt.Errorf("want a decimal number or 0x and hex digits")
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, fmt.Errorf("want a decimal number or 0x and hex digits")
	}
	if n > max {
		return 0, fmt.Errorf("out of range 0 to %d", max)
	}
	return n, nil
}

// ParsePortArg parses a port number argument: decimal or 0x hex, 0 to 255.
func ParsePortArg(s string) (int, error) {
	n, err := ParsePortNumber(s)
	if err == nil && n > 255 {
		err = UsageErrorf("invalid port number %q: out of range 0 to 255", s)
	}
	return n, err
}

// ParseOUI parses an IEEE OUI: 24 bits, decimal or 0x hex.
func ParseOUI(s string) (uint32, error) {
	n, err := ParseUintArg(s, 0xffffff)
	if err != nil {
		return 0, UsageErrorf("invalid OUI %q: %v", s, err)
	}
	return uint32(n), nil
}

// FlagError makes cobra's flag errors usage errors that point to --help.
func FlagError(_ *cobra.Command, err error) error { return &UsageError{Err: err, Syntax: true} }

// ArgsRange accepts between min and max positional arguments (max < 0: no
// limit) and reports anything else as a usage error.
func ArgsRange(min, max int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return &UsageError{Err: fmt.Errorf("expected at least %d argument(s), got %d", min, len(args)), Syntax: true}
		case max >= 0 && len(args) > max:
			return &UsageError{Err: fmt.Errorf("expected at most %d argument(s), got %d: %q", max, len(args), args[max:]), Syntax: true}
		}
		return nil
	}
}

// FindOperation returns the operation of ops that name names, by its name
// or alias in any case (smpquery's "NodeInfo" or "ni"), or the usage error
// infiniband-diags gives for an operation it does not know.
func FindOperation[T any](ops []T, name string, names func(*T) (name, alias string)) (*T, error) {
	var found *T
	for i := range ops {
		if n, a := names(&ops[i]); strings.EqualFold(name, n) || strings.EqualFold(name, a) {
			found = &ops[i]
		}
	}
	if found == nil {
		return nil, UsageErrorf("operation '%s' not supported", name)
	}
	return found, nil
}
