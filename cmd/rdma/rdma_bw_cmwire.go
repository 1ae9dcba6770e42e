package rdma

import (
	"math"

	"github.com/ibtool/ibtool/pkg/perftest"
)

// rdma_bw -R and -z trade perftest's messages over rdma_cm (pkg/perftest
// has their layouts); these turn its reports into rdma_bw's lines.

// ptReportOf is this side's line as the report perftest sends.
func ptReportOf(r bwResult) perftest.Report {
	return perftest.Report{Size: uint64(r.Size), Iters: uint64(r.Iters), Peak: r.BWPeak, Average: r.BWAvg, MsgRate: r.MsgRate}
}

// ptResult is the peer's report r as a line of this side's table, in
// gbits' unit for the six-decimal rule (the figures stay the peer's).
func ptResult(r perftest.Report, gbits bool) bwResult {
	name := "MB/sec"
	if gbits {
		name = "Gb/sec"
	}
	return bwResult{Size: int(min(r.Size, math.MaxInt32)), Iters: int(min(r.Iters, math.MaxInt32)), BWPeak: r.Peak, BWAvg: r.Average,
		MsgRate: r.MsgRate, Unit: name, accurate: gbits && r.Average < 0.1}
}
