package cmdutil

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// The output forms every tool shares: JSON documents and buffered tables.

// NewTableWriter buffers output that may run to megabytes (a fabric's
// links, routes or records) in 64 KiB writes rather than bufio's 4 KiB.
func NewTableWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }

// WriteJSONDocument writes v as one indented JSON document and a newline.
func WriteJSONDocument(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteJSONList writes {"key": [items...]} as writeJSONDocument would,
// byte for byte, but one item at a time through a buffer: a table of
// hundreds of thousands of records (saquery on a big fabric) is not built
// and indented in memory as one document.
func WriteJSONList(w io.Writer, key string, items []any) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintf(bw, "{\n  %s: []\n}\n", k)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "{\n  %s: [\n", k)
	for i, it := range items {
		b, err := json.MarshalIndent(it, "    ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString("    ")
		bw.Write(b)
		if i < len(items)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("  ]\n}\n")
	return bw.Flush()
}
