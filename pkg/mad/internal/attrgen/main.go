// Command attrgen turns pkg/mad's attribute table (attributes.tbl) into Go:
// one struct per attribute with allocation-free UnmarshalBinary and
// AppendBinary, its Layout for the dumper and JSON, and its Attr<Name> ID;
// for the SA records, the component mask bits and member names of their
// fields, those of the SMP attributes they embed included.
//
//	go run ./internal/attrgen attributes.tbl attrs_gen.go
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: attrgen TABLE OUTPUT.go")
		os.Exit(2)
	}
	src, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "attrgen:", err)
		os.Exit(1)
	}
	tab, err := parse(string(src))
	if err != nil {
		fmt.Fprintf(os.Stderr, "attrgen: %s:%v\n", os.Args[1], err)
		os.Exit(1)
	}
	out, err := generate(tab)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attrgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "attrgen:", err)
		os.Exit(1)
	}
}
