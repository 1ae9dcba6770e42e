// Package jsonkeys lists the key paths of a JSON document, so that a test
// can pin a tool's --json schema while the code that writes it changes.
package jsonkeys
