//go:build cgo && !noverbs

package verbs_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleAllocBuffer fills memory a memory region can register (outside
// the Go heap) with a test pattern and checks it as a receiver does. A
// program then registers it: ctx, _ := verbs.Open("rxe0"); pd, _ :=
// ctx.AllocPD(); mr, _ := pd.RegMR(buf, verbs.AccessLocalWrite|...).
func ExampleAllocBuffer() {
	buf, err := verbs.AllocBuffer(4096)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Free()
	p := verbs.Pattern(42)
	p.Fill(buf.Bytes())
	fmt.Println("first difference:", p.FirstDiff(buf.Bytes()))
	buf.Bytes()[1000] ^= 0xff
	fmt.Println("after a flipped byte:", p.FirstDiff(buf.Bytes()))
	// Output:
	// first difference: -1
	// after a flipped byte: 1000
}
