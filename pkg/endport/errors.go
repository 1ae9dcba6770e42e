package endport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// MismatchError reports a target whose form is not the kind a legacy flag
// (-L, -G, -D) asserts.
type MismatchError struct {
	Want  Kind   // the kind asserted
	Got   Kind   // the kind the format says
	Input string // the target as given
}

// Error says which flag was given and what the target is instead, with a
// hint where the fix is clear: `-G given but "12" is a LID; ...`.
func (e *MismatchError) Error() string {
	asked := e.Want.flag() + " given"
	if e.Want.flag() == "" {
		asked = "want a " + e.Want.String()
	}
	msg := fmt.Sprintf("%s but %q is a %s", asked, e.Input, e.Got)
	return msg + e.hint()
}

// hint suggests the spelling that would have passed, where one is clear.
func (e *MismatchError) hint() string {
	switch {
	case e.Want == GUID && e.Got == LID:
		if h, ok := cutHexPrefix(e.Input); ok {
			if n, err := strconv.ParseUint(h, 16, 64); err == nil {
				return fmt.Sprintf("; a GUID has more than 4 hex digits: 0x%016x", n)
			}
		}
		return "; a GUID is 0x and more than 4 hex digits, or 0002:c903:00a1:b2c4"
	case e.Want == LID && e.Got == DirectRoute && !strings.ContainsRune(e.Input, ','):
		return " (the local port); LID 0 is reserved"
	}
	return ""
}

// reasonOf returns the Reason of a *rdma.ParseError, or the error text.
func reasonOf(err error) string {
	var pe *rdma.ParseError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}
