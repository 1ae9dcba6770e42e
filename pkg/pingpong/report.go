package pingpong

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Report prints the two result lines every pingpong ends with, for iters
// round trips of size bytes each way in elapsed:
//
//	8192000 bytes in 0.05 seconds = 1310.72 Mbit/sec
//	1000 iters in 0.05 seconds = 50.00 usec/iter
//
// The arithmetic is rdma-core's, whose microseconds are a C float: the
// time is taken at microsecond resolution and rounded to a float32, and
// the time per iteration is divided in float32 too, so the same elapsed
// time prints the same digits.
func Report(w io.Writer, size, iters int, elapsed time.Duration) error {
	usec := float32(elapsed.Microseconds())
	bytes := int64(size) * int64(iters) * 2
	_, err := fmt.Fprintf(w, "%d bytes in %.2f seconds = %s Mbit/sec\n%d iters in %.2f seconds = %s usec/iter\n",
		bytes, float64(usec)/1e6, cFixed(float64(bytes)*8/float64(usec)),
		iters, float64(usec)/1e6, cFixed(float64(usec/float32(iters))))
	return err
}

// cFixed is printf's %.2f as glibc prints it: a run under a microsecond
// divides by zero, which C prints as inf or -nan where Go says +Inf and
// NaN.
func cFixed(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsNaN(v):
		return "-nan"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
