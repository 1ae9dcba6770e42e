// Package cmd is ibtool's busybox front: Main finds the tool that argv[0]
// (a symlink) or argv[1] names and runs it; with no tool it lists them.
// It also holds the built-in commands (links, completion) and families.go,
// which links every tool family in.
//
// The tools live in family packages below (cmd/smp, cmd/sa, cmd/perf,
// cmd/fabric, cmd/cc, cmd/vs, cmd/local, cmd/rdma, cmd/trace) that register
// themselves with cmd/internal/cmdutil, where the plumbing every tool shares
// is: the Factory, the common options, the run, errors and exit codes,
// output. A family never imports another family (families_test.go checks
// it): what two families share lives in cmdutil or in pkg/.
// docs/architecture.md says how a command runs and how to add one.
package cmd
