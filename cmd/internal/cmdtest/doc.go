// Package cmdtest holds what the tool families' tests share: parsing a
// tool's arguments into its options, golden files, and a fake fabric for
// --dry-run runs. Only tests import it.
package cmdtest
