package pingpong

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseNum reads a number as the pingpongs' strtoul(arg, NULL, 0) does
// (decimal, 0x hex, or octal with a leading 0), but whole: text after
// the digits, a sign or a value over max is an error where strtoul would
// stop or wrap silently. name says which option in the message.
func ParseNum(name, s string, max uint64) (uint64, error) {
	t := strings.TrimSpace(s)
	base := 10
	switch {
	case strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	v, err := strconv.ParseUint(t, base, 64)
	if err != nil || t == "" || t[0] == '+' {
		return 0, fmt.Errorf("invalid %s %q: want a number (decimal, 0x hex or 0 octal)", name, s)
	}
	if v > max {
		return 0, fmt.Errorf("invalid %s %q: want at most %d", name, s, max)
	}
	return v, nil
}

// MTUBytes checks a path MTU in bytes as pp_mtu_to_enum does and returns
// it as enum ibv_mtu (1 for 256 up to 5 for 4096), or 0 for a size that
// is not an MTU.
func MTUBytes(n uint64) int {
	for e := 1; e <= 5; e++ {
		if n == 128<<e {
			return e
		}
	}
	return 0
}
