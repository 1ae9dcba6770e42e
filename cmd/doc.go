// Package cmd holds one cobra command per ibtool tool, the registry that the
// busybox dispatch in main.go looks tools up in, the flags every tool shares,
// the table printer, and the one place errors become messages and exit codes.
//
// A tool file registers itself from init with a Tool value: its name as
// operators type it (the infiniband-diags name, e.g. "perfquery" or
// "dump_lfts.sh"), a one-line summary, and a constructor that builds its
// *cobra.Command from a *Factory. Command logic takes the Factory's streams
// and plain options, so tests run it without a process.
package cmd
