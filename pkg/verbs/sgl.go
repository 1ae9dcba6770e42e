package verbs

import (
	"errors"
	"fmt"
	"syscall"
)

// SGE is one scatter/gather entry of a work request: bytes [Offset,
// Offset+Length) of MR. A request's SGL gathers its entries in order into
// one message (send side) or scatters one message over them (receive
// side).
type SGE struct {
	MR     *MR
	Offset int
	Length int
}

// ErrTooManySGEs is wrapped (with EINVAL) by what CreateQP, CreateSRQ and
// the posts return for more scatter/gather entries than the device
// (its max_sge) or the queue (the SGEs it was made with) takes.
var ErrTooManySGEs = errors.New("too many scatter/gather entries")

// tooManySGEs is ErrTooManySGEs with the numbers, wrapping EINVAL as
// libibverbs' providers return it.
func tooManySGEs(n int, what string, most int) error {
	return fmt.Errorf("%w (%w): %d, %s takes at most %d", ErrTooManySGEs, syscall.EINVAL, n, what, most)
}

// local resolves a work request's local memory, given either as mr,
// off and n or as sgl (not both), into one SGE (first) or a list of two or
// more (rest). Memory outside its MR, or an MR of a PD other than pd,
// panics: verb (PostSend, ...) and on (the QP or SRQ) name the caller in
// the message.
func local(verb string, on fmt.Stringer, pd *PD, mr *MR, off, n int, sgl []SGE) (first sgeWork, rest []sgeWork) {
	what := fmt.Sprintf("%s on %s", verb, on)
	one := func(mr *MR, off, n int) sgeWork {
		if mr.pd != pd {
			panic(fmt.Sprintf("verbs: %s with %s of another PD", what, mr))
		}
		return sgeWork{addr: mr.span(verb, off, n), length: uint32(n), lkey: mr.lkey}
	}
	if sgl == nil {
		if mr == nil {
			if n != 0 {
				panic(fmt.Sprintf("verbs: %s: %d bytes without an MR", what, n))
			}
			return sgeWork{}, nil
		}
		return one(mr, off, n), nil
	}
	if mr != nil || off != 0 || n != 0 {
		panic(fmt.Sprintf("verbs: %s with both an MR and an SGL: give one", what))
	}
	list := make([]sgeWork, len(sgl))
	for i, e := range sgl {
		if e.MR == nil {
			panic(fmt.Sprintf("verbs: %s: SGE %d has no MR", what, i))
		}
		list[i] = one(e.MR, e.Offset, e.Length)
	}
	if len(list) == 1 {
		return list[0], nil
	}
	return sgeWork{}, list
}

// total is the bytes of a resolved request's memory.
func total(first sgeWork, rest []sgeWork) int {
	n := int(first.length)
	for _, e := range rest {
		n += int(e.length)
	}
	return n
}
