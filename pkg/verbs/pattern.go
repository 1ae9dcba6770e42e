package verbs

import (
	"encoding/binary"
	"math/rand/v2"
)

// Pattern is the seed of the pseudo-random bytes a transfer test writes
// and its receiver checks: one seed gives the same bytes on both sides,
// and a shorter fill is a prefix of a longer one.
type Pattern uint64

// stream returns the generator of the pattern's 8-byte words, each
// written little-endian.
func (p Pattern) stream() *rand.Rand {
	return rand.New(rand.NewPCG(uint64(p), uint64(p)^0x9e3779b97f4a7c15))
}

// Fill writes the pattern's first len(b) bytes into b.
func (p Pattern) Fill(b []byte) {
	r := p.stream()
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
}

// FirstDiff returns the offset of the first byte of b that differs from
// the pattern, or -1 when b is the pattern's first len(b) bytes. It
// generates the pattern as it compares, so that checking a large buffer
// needs no copy of it.
func (p Pattern) FirstDiff(b []byte) int {
	r := p.stream()
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		for j, c := range b[i:min(i+8, len(b))] {
			if c != w[j] {
				return i + j
			}
		}
	}
	return -1
}
