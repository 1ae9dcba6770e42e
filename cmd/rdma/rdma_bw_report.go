package rdma

import (
	"crypto/sha256"
	"fmt"
	"time"
)

// bwStats is what one side's send loop measured, in the form perftest's
// print_report_bw computes its line from.
type bwStats struct {
	Size  int `json:"size"`
	Iters int `json:"iterations"`
	// Elapsed is the time from the first post to the last completion (or
	// the sampled window in duration mode).
	Elapsed time.Duration `json:"elapsedNs"`
	// PeakPerMsg is the shortest time per message over any run of
	// messages ending at a signalled completion; 0 when not measured
	// (-N, duration mode, more than 20000 iterations).
	PeakPerMsg float64 `json:"peakNsPerMessage"`
}

// bwResult is one line of the report.
type bwResult struct {
	Size     int     `json:"size"`
	Iters    int     `json:"iterations"`
	BWPeak   float64 `json:"bwPeak"`
	BWAvg    float64 `json:"bwAverage"`
	MsgRate  float64 `json:"msgRateMpps"`
	Unit     string  `json:"unit"`
	accurate bool    // six decimals (Gb/s under 0.1), as perftest's REPORT_FMT_EXT
}

// Bandwidth units: perftest's MB/sec is 2^20 bytes a second, Gb/sec 10^9
// bits.
const (
	unitMB = 0x100000
	unitGb = 125000000
)

// result turns the stats of both directions (peer nil when one way) into
// the report line: perftest adds the two sides' figures in a
// bidirectional test.
func (s bwStats) result(peer *bwStats, gbits bool) bwResult {
	unit, name := float64(unitMB), "MB/sec"
	if gbits {
		unit, name = unitGb, "Gb/sec"
	}
	r := bwResult{Size: s.Size, Iters: s.Iters, Unit: name}
	for _, st := range []*bwStats{&s, peer} {
		if st == nil {
			continue
		}
		if sec := st.Elapsed.Seconds(); sec > 0 {
			r.BWAvg += float64(st.Size) * float64(st.Iters) / sec / unit
			r.MsgRate += float64(st.Iters) / sec / 1e6
		}
		if st.PeakPerMsg > 0 {
			r.BWPeak += float64(st.Size) / (st.PeakPerMsg / 1e9) / unit
		}
	}
	r.accurate = gbits && r.BWAvg < 0.1
	return r
}

// peakPerMsg is perftest's peak search: for every first post i and every
// signalled completion j at or after it, the time per message
// (completed[j] - posted[i]) / (j - i + 1); the least of them, in
// nanoseconds. completed holds a time only at the signalled indices
// (zero elsewhere).
func peakPerMsg(posted, completed []time.Duration, signalled []int) float64 {
	best := 0.0
	k := 0
	for i := range posted {
		for k < len(signalled) && signalled[k] < i {
			k++
		}
		for _, j := range signalled[k:] {
			t := float64(completed[j]-posted[i]) / float64(j-i+1)
			if best == 0 || t < best {
				best = t
			}
		}
	}
	return best
}

// resultHeader is perftest's RESULT_FMT (or RESULT_FMT_G) line.
func resultHeader(gbits bool) string {
	if gbits {
		return " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
	}
	return " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
}

// resultLine is the separator perftest prints around its tables.
const resultLine = "---------------------------------------------------------------------------------------\n"

// appendResult is perftest's REPORT_FMT line (REPORT_FMT_EXT for small
// Gb/s figures).
func appendResult(b []byte, r bwResult) []byte {
	if r.accurate {
		return fmt.Appendf(b, " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
	}
	return fmt.Appendf(b, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
}

// checksum is the SHA-256 of b in hex.
func checksum(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

// cHex formats v as C's printf("%#0*x") does: no 0x for zero.
func cHex(v uint64, width int) string {
	if v == 0 {
		return fmt.Sprintf("%0*d", width, 0)
	}
	// C counts the 0x in the width; Go's %#0*x does not.
	return fmt.Sprintf("0x%0*x", max(width-2, 0), v)
}

// appendDest is perftest's ctx_print_pingpong_data line for an RDMA WRITE
// test, with the GID line when a GID index is in use. Over perftest's
// rdma_cm exchange (-R, -z) perftest prints the line of its exchange's
// SEND QP, without the rkey and address: so does sendOnly.
func appendDest(b []byte, side string, d *bwDest, withGID, sendOnly bool) []byte {
	b = fmt.Appendf(b, " %s address: LID %s QPN %s PSN %s", side, cHex(uint64(d.LID), 4), cHex(uint64(d.QPN), 6), cHex(uint64(d.PSN), 6))
	if !sendOnly {
		b = fmt.Appendf(b, " RKey %s VAddr %s", cHex(uint64(d.RKey), 8), cHex(d.Addr, 16))
	}
	b = append(b, '\n')
	if withGID {
		b = append(b, " GID: "...)
		for i, x := range d.GID {
			if i > 0 {
				b = append(b, ':')
			}
			b = fmt.Appendf(b, "%02d", x)
		}
		b = append(b, '\n')
	}
	return b
}
