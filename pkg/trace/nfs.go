package trace

import (
	"encoding/hex"
	"fmt"
)

// HexBytes prints as a hex string, in text and in JSON.
type HexBytes []byte

// String returns the bytes in hex.
func (h HexBytes) String() string { return hex.EncodeToString(h) }

// MarshalText writes the bytes in hex.
func (h HexBytes) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// NFSOp is what an NFS call or reply says: the procedure (NFSv3) or the
// COMPOUND's operations (NFSv4), its status, and the READ or WRITE in it.
type NFSOp struct {
	Version uint32 `json:"version"`
	Minor   uint32 `json:"minorVersion,omitempty"`
	// Proc is the NFSv3 procedure or NFSv4's NULL or COMPOUND; Ops the
	// COMPOUND's operations ("..." after one trace does not decode).
	Proc string   `json:"proc"`
	Ops  []string `json:"ops,omitempty"`
	// Status is a reply's nfsstat (0 is OK).
	Status uint32 `json:"status"`
	// IO is the READ or WRITE the message carries.
	IO *NFSIO `json:"io,omitempty"`
}

// NFSIO is an NFS READ or WRITE: the file, the range, and where the data
// sits in the RPC message and how it came.
type NFSIO struct {
	Op     string   `json:"op"`
	FH     HexBytes `json:"fh"`
	Offset uint64   `json:"offset"`
	Count  uint32   `json:"count"`
	EOF    *bool    `json:"eof,omitempty"`
	// DataOffset and DataLength place the data (a WRITE call's, a READ
	// reply's) in the whole RPC message; Via says how it came: "inline",
	// "read chunk" or "write chunk", and ViaOps and ViaPackets with how
	// many RDMA operations and packets.
	DataOffset int    `json:"dataOffset,omitempty"`
	DataLength int    `json:"dataLength"`
	Via        string `json:"via,omitempty"`
	ViaOps     int    `json:"viaOps,omitempty"`
	ViaPackets int    `json:"viaPackets,omitempty"`
	Data       []byte `json:"-"`
}

var nfs3Procs = []string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE",
	"MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO",
	"PATHCONF", "COMMIT"}

// nfs4Ops names NFSv4.x operations from ACCESS (3) on (RFC 7530, 8881, 7862).
var nfs4Ops = []string{"ACCESS", "CLOSE", "COMMIT", "CREATE", "DELEGPURGE", "DELEGRETURN", "GETATTR", "GETFH",
	"LINK", "LOCK", "LOCKT", "LOCKU", "LOOKUP", "LOOKUPP", "NVERIFY", "OPEN", "OPENATTR", "OPEN_CONFIRM",
	"OPEN_DOWNGRADE", "PUTFH", "PUTPUBFH", "PUTROOTFH", "READ", "READDIR", "READLINK", "REMOVE", "RENAME", "RENEW",
	"RESTOREFH", "SAVEFH", "SECINFO", "SETATTR", "SETCLIENTID", "SETCLIENTID_CONFIRM", "VERIFY", "WRITE",
	"RELEASE_LOCKOWNER", "BACKCHANNEL_CTL", "BIND_CONN_TO_SESSION", "EXCHANGE_ID", "CREATE_SESSION",
	"DESTROY_SESSION", "FREE_STATEID", "GET_DIR_DELEGATION", "GETDEVICEINFO", "GETDEVICELIST", "LAYOUTCOMMIT",
	"LAYOUTGET", "LAYOUTRETURN", "SECINFO_NO_NAME", "SEQUENCE", "SET_SSV", "TEST_STATEID", "WANT_DELEGATION",
	"DESTROY_CLIENTID", "RECLAIM_COMPLETE", "ALLOCATE", "COPY", "COPY_NOTIFY", "DEALLOCATE", "IO_ADVISE",
	"LAYOUTERROR", "LAYOUTSTATS", "OFFLOAD_CANCEL", "OFFLOAD_STATUS", "READ_PLUS", "SEEK", "WRITE_SAME", "CLONE"}

// The NFSv4 operations whose arguments or results trace walks over.
const (
	op4Access    = 3
	op4Close     = 4
	op4Open      = 18
	op4Setattr   = 34
	op4Commit    = 5
	op4Getattr   = 9
	op4Getfh     = 10
	op4Lookup    = 15
	op4Putfh     = 22
	op4Read      = 25
	op4Write     = 38
	op4Sequence  = 53
	op4Illegal   = 10044
	nfs3Read     = 6
	nfs3Write    = 7
	fattr3Size   = 84
	wccAttrSize  = 24
	maxFHSize    = 128
	maxOps       = 1024
	stateidSize  = 16
	sessionSize  = 16
	verifierSize = 8
)

func nfs4OpName(op uint32) string {
	switch {
	case op >= 3 && int(op-3) < len(nfs4Ops):
		return nfs4Ops[op-3]
	case op == op4Illegal:
		return "ILLEGAL"
	}
	return fmt.Sprintf("op%d", op)
}

// NFSProcName names an NFS procedure of a version.
func NFSProcName(vers, proc uint32) string {
	switch {
	case vers == 3 && int(proc) < len(nfs3Procs):
		return nfs3Procs[proc]
	case vers == 4 && proc == 0:
		return "NULL"
	case vers == 4 && proc == 1:
		return "COMPOUND"
	}
	return fmt.Sprintf("proc %d", proc)
}

// DecodeNFSCall decodes the arguments of an NFSv3 or v4 call in a whole
// RPC message whose header is h.
func DecodeNFSCall(rpc []byte, h *ONCRPC) (*NFSOp, error) {
	if h.Prog != ProgNFS || (h.Vers != 3 && h.Vers != 4) {
		return nil, nil
	}
	n := &NFSOp{Version: h.Vers, Proc: NFSProcName(h.Vers, h.Proc)}
	x := &xdrReader{b: rpc, off: h.Body}
	if h.Flavor == 6 {
		return n, nil // RPCSEC_GSS may wrap the arguments
	}
	switch {
	case h.Vers == 3 && (h.Proc == nfs3Read || h.Proc == nfs3Write):
		io := &NFSIO{Op: n.Proc, FH: x.opaque(64), Offset: x.u64(), Count: x.u32()}
		if h.Proc == nfs3Write {
			x.u32()
			io.data(x, nil)
		}
		n.IO = io
	case h.Vers == 4 && h.Proc == 1:
		x.opaque(1024)
		n.Minor = x.u32()
		count := x.u32()
		if x.err == nil && count > maxOps {
			x.fail("%d operations", count)
		}
		var fh []byte
		for i := uint32(0); i < count && x.err == nil; i++ {
			op := x.u32()
			n.Ops = append(n.Ops, nfs4OpName(op))
			switch op {
			case op4Sequence:
				x.skip(sessionSize + 16)
			case op4Putfh:
				fh = x.opaque(maxFHSize)
			case op4Getattr:
				bitmap(x)
			case op4Access:
				x.u32()
			case op4Commit:
				x.u64()
				x.u32()
			case op4Lookup:
				x.opaque(1 << 16)
			case op4Open:
				openArgs(x)
			case op4Close:
				x.u32()
				x.skip(stateidSize)
			case op4Setattr:
				x.skip(stateidSize)
				fattr4(x)
			case op4Read:
				x.skip(stateidSize)
				n.IO = &NFSIO{Op: "READ", FH: fh, Offset: x.u64(), Count: x.u32()}
			case op4Write:
				x.skip(stateidSize)
				n.IO = &NFSIO{Op: "WRITE", FH: fh, Offset: x.u64()}
				x.u32()
				n.IO.data(x, nil)
				n.IO.Count = uint32(n.IO.DataLength)
			case 16, 24, 23, 10, 31, 32, 27: // LOOKUPP, PUTROOTFH, PUTPUBFH, GETFH, RESTOREFH, SAVEFH, READLINK
			default:
				if i+1 < count {
					n.Ops = append(n.Ops, "...")
				}
				return n, nil
			}
		}
	}
	if x.err != nil {
		return n, fmt.Errorf("NFS%d %s arguments: %w", h.Vers, n.Proc, x.err)
	}
	return n, nil
}

// bitmap passes over a bitmap4.
func bitmap(x *xdrReader) {
	n := x.u32()
	if x.err == nil && int(n)*4 > x.rest() {
		x.fail("bitmap of %d words: %w", n, errShort)
		return
	}
	x.skip(int(n) * 4)
}

// data reads an opaque's length and bytes, or, when a write chunk stands
// in for them (ddp), takes it: the reply's bytes are then inserted there.
func (io *NFSIO) data(x *xdrReader, ddp *ddpState) {
	n := x.u32()
	if x.err != nil {
		return
	}
	io.DataLength = int(n)
	if ddp != nil && ddp.next < len(ddp.chunks) && ddp.at < 0 {
		c := ddp.chunks[ddp.next]
		ddp.next++
		ddp.at = x.off
		ddp.data = c.Data[:min(int(n), len(c.Data))]
		if len(ddp.data) < int(n) {
			x.fail("the write chunk holds %d bytes of %d", len(c.Data), n)
		}
		io.DataOffset, io.Via, io.Data = x.off, "write chunk", ddp.data
		io.ViaOps, io.ViaPackets = c.Ops()
		return
	}
	io.DataOffset = x.off
	io.Data = x.fixed(int(n))
}

// ddpState carries the write chunks an NFS reply's data may sit in and
// where the one taken goes.
type ddpState struct {
	chunks []*Chunk
	next   int
	at     int
	data   []byte
}

// DecodeNFSReply decodes the results of an NFSv3 or v4 reply to call (the
// call's NFSOp, nil when the capture lacks it; h then says nothing of the
// version and nothing is decoded). A READ's data may be in the first of
// writeChunks instead of the message: the returned RPC message then has
// it inserted where it belongs.
func DecodeNFSReply(rpc []byte, h *ONCRPC, call *NFSOp, writeChunks []*Chunk) (*NFSOp, []byte, error) {
	if call == nil || h.Status != "success" {
		return nil, rpc, nil
	}
	n := &NFSOp{Version: call.Version, Minor: call.Minor, Proc: call.Proc}
	x := &xdrReader{b: rpc, off: h.Body}
	ddp := &ddpState{chunks: writeChunks, at: -1}
	io := func(op string) *NFSIO {
		io := &NFSIO{Op: op}
		if call.IO != nil {
			io.FH, io.Offset, io.Count = call.IO.FH, call.IO.Offset, call.IO.Count
		}
		n.IO = io
		return io
	}
	switch {
	case call.Version == 3 && (call.Proc == "READ" || call.Proc == "WRITE"):
		n.Status = x.u32()
		if n.Status != 0 {
			break
		}
		if call.Proc == "READ" {
			postOpAttr(x)
			r := io("READ")
			r.Count = x.u32()
			eof := x.bool()
			r.EOF = &eof
			r.data(x, ddp)
		} else {
			if x.bool() {
				x.skip(wccAttrSize)
			}
			postOpAttr(x)
			w := io("WRITE")
			w.Count = x.u32()
			x.u32()
			x.skip(verifierSize)
		}
	case call.Proc == "NULL":
	case call.Version == 3:
		n.Status = x.u32()
	case call.Version == 4 && call.Proc == "COMPOUND":
		n.Status = x.u32()
		x.opaque(1024)
		count := x.u32()
		if x.err == nil && count > maxOps {
			x.fail("%d results", count)
		}
	ops:
		for i := uint32(0); i < count && x.err == nil; i++ {
			op, status := x.u32(), x.u32()
			n.Ops = append(n.Ops, nfs4OpName(op))
			if status != 0 {
				break
			}
			switch op {
			case op4Sequence:
				x.skip(sessionSize + 20)
			case op4Getattr:
				bitmap(x)
				x.opaque(1 << 20)
			case op4Getfh:
				x.opaque(maxFHSize)
			case op4Access:
				x.skip(8)
			case op4Commit:
				x.skip(verifierSize)
			case op4Read:
				r := io("READ")
				eof := x.bool()
				r.EOF = &eof
				r.data(x, ddp)
				r.Count = uint32(r.DataLength)
			case op4Write:
				w := io("WRITE")
				w.Count = x.u32()
				x.u32()
				x.skip(verifierSize)
			case op4Open:
				openResult(x)
			case op4Close:
				x.skip(stateidSize)
			case op4Setattr:
				bitmap(x)
			case op4Putfh, op4Lookup, 16, 24, 23, 31, 32:
			default:
				if i+1 < count {
					n.Ops = append(n.Ops, "...")
				}
				break ops
			}
		}
	}
	whole := rpc
	if ddp.at >= 0 {
		pad := (4 - len(ddp.data)%4) % 4
		whole = append(append(append(append([]byte{}, rpc[:ddp.at]...), ddp.data...), make([]byte, pad)...), rpc[ddp.at:]...)
	}
	if x.err != nil {
		return n, whole, fmt.Errorf("NFS%d %s results: %w", call.Version, call.Proc, x.err)
	}
	return n, whole, nil
}

// postOpAttr passes over an NFSv3 post_op_attr.
func postOpAttr(x *xdrReader) {
	if x.bool() {
		x.skip(fattr3Size)
	}
}

// String is one line saying what the message does: `NFS4 WRITE fh 01ab
// offset 0 count 1048576 via read chunk: 1 MiB in 256 READ responses
// (SEQUENCE PUTFH WRITE GETATTR)`; a reply adds its status.
func (n *NFSOp) String() string {
	v := fmt.Sprintf("NFS%d", n.Version)
	if n.Version == 4 && n.Minor > 0 {
		v += fmt.Sprintf(".%d", n.Minor)
	}
	s := v + " " + n.Proc
	if io := n.IO; io != nil {
		s = fmt.Sprintf("%s %s fh %v offset %d count %d", v, io.Op, io.FH, io.Offset, io.Count)
		if io.EOF != nil && *io.EOF {
			s += " eof"
		}
		switch io.Via {
		case "read chunk":
			s += fmt.Sprintf(" via read chunk: %s in %d READ responses", sizeString(io.DataLength), io.ViaPackets)
		case "write chunk":
			s += fmt.Sprintf(" via write chunk: %s in %d WRITE packets", sizeString(io.DataLength), io.ViaPackets)
		case "inline":
			s += fmt.Sprintf(" inline: %s", sizeString(io.DataLength))
		}
	}
	if len(n.Ops) > 0 {
		s += " ("
		for i, o := range n.Ops {
			if i > 0 {
				s += " "
			}
			s += o
		}
		s += ")"
	}
	return s
}

// sizeString prints a byte count, in KiB or MiB when it is a whole number
// of them.
func sizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fattr4 passes over an attribute bitmap and its values.
func fattr4(x *xdrReader) {
	bitmap(x)
	x.opaque(1 << 20)
}

// openArgs passes over OPEN4args (RFC 8881 section 18.16).
func openArgs(x *xdrReader) {
	x.u32()           // seqid
	x.skip(8)         // share_access, share_deny
	x.u64()           // the owner's clientid
	x.opaque(1024)    // the owner
	if x.u32() == 1 { // OPEN4_CREATE
		switch mode := x.u32(); mode {
		case 0, 1: // UNCHECKED4, GUARDED4
			fattr4(x)
		case 2: // EXCLUSIVE4
			x.skip(verifierSize)
		case 3: // EXCLUSIVE4_1
			x.skip(verifierSize)
			fattr4(x)
		default:
			x.fail("createmode %d", mode)
		}
	}
	switch claim := x.u32(); claim {
	case 0, 3: // CLAIM_NULL, CLAIM_DELEGATE_PREV
		x.opaque(1 << 16)
	case 1: // CLAIM_PREVIOUS
		x.u32()
	case 2: // CLAIM_DELEGATE_CUR
		x.skip(stateidSize)
		x.opaque(1 << 16)
	case 4, 6: // CLAIM_FH, CLAIM_DELEG_PREV_FH
	case 5: // CLAIM_DELEG_CUR_FH
		x.skip(stateidSize)
	default:
		x.fail("open claim %d", claim)
	}
}

// openResult passes over OPEN4resok.
func openResult(x *xdrReader) {
	x.skip(stateidSize)
	x.skip(4 + 16) // change_info4
	x.u32()        // rflags
	bitmap(x)      // attrset
	ace := func() {
		x.skip(12)
		x.opaque(1024)
	}
	switch dt := x.u32(); dt {
	case 0: // OPEN_DELEGATE_NONE
	case 1: // OPEN_DELEGATE_READ
		x.skip(stateidSize + 4)
		ace()
	case 2: // OPEN_DELEGATE_WRITE
		x.skip(stateidSize + 4)
		switch lim := x.u32(); lim {
		case 1:
			x.u64()
		case 2:
			x.skip(8)
		default:
			x.fail("space limit %d", lim)
		}
		ace()
	case 3: // OPEN_DELEGATE_NONE_EXT
		if why := x.u32(); why == 1 || why == 2 { // WND4_CONTENTION, WND4_RESOURCE
			x.u32()
		}
	default:
		x.fail("delegation type %d", dt)
	}
}
