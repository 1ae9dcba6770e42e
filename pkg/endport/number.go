package endport

import (
	"strconv"
	"strings"
	"unicode"
)

// parseNumber parses s as decimal digits or as 0x and hex digits, no larger
// than max. A leading zero is decimal, never octal: "010" is 10. On failure
// it returns a reason for a ParseError.
func parseNumber(s string, max uint64) (uint64, string) {
	digits, base := s, 10
	if h, ok := cutHexPrefix(s); ok {
		digits, base = h, 16
		if h == "" {
			return 0, "want hex digits after 0x"
		}
		if !isHex(h) {
			return 0, "want only hex digits after 0x"
		}
	} else if s == "" || !isDecimal(s) {
		return 0, "want a decimal number or 0x and hex digits"
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil || n > max {
		return 0, "out of range 0 to " + strconv.FormatUint(max, 10)
	}
	return n, ""
}

// cutHexPrefix reports whether s starts with 0x or 0X and returns the rest.
func cutHexPrefix(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }
