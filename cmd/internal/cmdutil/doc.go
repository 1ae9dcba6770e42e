// Package cmdutil is the plumbing every ibtool tool shares: the registry
// (Register, Lookup, Tools), the Factory and its one lazily opened MAD
// access per run, the common options and their flag groups, discovery
// options and the topology caches, the run (signals, the transport's end,
// muted streams), error types, exit codes and their rendering, JSON and
// table output, argument parsers, --dry-run and sysfs access. A
// cross-cutting option is added here once.
package cmdutil
