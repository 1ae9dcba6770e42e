// Package endport parses the two addresses every MAD tool takes: the local
// end port it sends from and the target it queries, and opens the local
// end port for MADs. Parsing needs no devices; Local.Resolve then finds
// the local port among the devices a DeviceSource lists.
//
// # Opening a port
//
// Open is the one way a program, and every tool, opens an end port for
// MADs, as python-rdma's get_end_port and get_umad do: it finds the port a
// spec names, opens the kernel's umad device of it (with KernelGrace) or
// attaches to the ibsim simulator when the environment asks for it
// (IBTOOL_SIM=1, IBSIM_SOCKNAME), reads ibdiag.conf's defaults (CA, Port,
// timeout, m_key, sa_key), and returns a Port holding a ready
// mad.Transactor. Options change each default (WithTimeout, WithMKey,
// WithSysfs, WithSimulator, ...). Port.Resolve and Port.PathRecord ask the
// SA for the path to a port GUID or GID in one call. A failure is an
// *OpenError naming the step that failed, its cause wrapped.
//
// # Local end port
//
// infiniband-diags' -C and -P give a device name and a port number
// (FromFlags; port 0, or none, is the first usable port). --port takes one
// spec, the forms python-rdma's ibtool takes for -P (ParseLocal):
// mlx5_0, mlx5_0/1, a bare port number, a port GUID (0x0002c90300a1b2c4 or
// 0002:c903:00a1:b2c4) or a port GID (fe80::2:c903:a1:b2c4), and a node
// GUID with a port number (0x0002c90300a1b2c3/1). FromFlagArgs takes -C and
// -P as typed: -C is a device name or, as in python-rdma, a node GUID; -P
// is a port number or, without -C, any --port spec.
//
// # Target
//
// The format alone decides the kind of a target (ParseTarget). The forms
// are disjoint, tested in this order:
//
//	IBPath(DLID=12, SL=1)    anything with "(": a python-rdma path spec (ParsePathSpec)
//	fe80::1%mlx5_0/1         "%": a scoped GID, GID%end-port (no bare port number)
//	0,1,3                    ",": a DR path (ParseDRPath; one trailing comma, 0,1,, is allowed)
//	0002:c903:00a1:b2c4      ":" and four non-empty groups: a port GUID
//	fe80::2:c903:a1:b2c4     other ":": a GID in IPv6 notation
//	0x1a                     0x and 1 to 4 hex digits: a LID
//	0x0002c90300a1b2c4       0x and 5 to 16 hex digits: a port GUID
//	0                        decimal zero: the DR path to the local port
//	12                       other decimal: a LID (leading zeros are not octal)
//
// A target LID is unicast, 1 to 49151, as infiniband-diags' IB_LID_VALID
// and python-rdma's conv_lid require; GUID 0 and the zero GID address no
// port and are refused. Whitespace is refused except between the items of
// a path spec. The legacy flags -L, -G and -D only assert the kind:
// ParseTarget with LID, GUID or DirectRoute fails with a *MismatchError
// when the format says otherwise. Malformed input is a *rdma.ParseError.
//
// A target may name the local end port it is reached from (Target.EndPort:
// a scoped GID's scope, a path spec's end_port); Local.ResolveScoped then
// picks that port where it agrees with the flags, as python-rdma does.
//
// Every type prints its canonical form with String (and MarshalText, for
// JSON), which the parsers read back to the same value: LIDs in decimal,
// GUIDs as 0x and 16 hex digits, GIDs in short IPv6 form, DR paths as
// 0,1,3, path specs as python-rdma's repr.
package endport
