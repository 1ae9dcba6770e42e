// Package hugeheap asks the kernel to back the part of the Go heap a
// program is about to grow into with transparent huge pages.
//
// A fabric-wide tool builds tens to hundreds of megabytes of heap in well
// under a second, and every fresh 4 KiB page of it costs a page fault. In
// virtual machines a fault costs microseconds, enough to be a visible part
// of a fabric-wide tool's time (docs/bench.md has the numbers). With a
// 2 MiB page one fault covers 512 pages.
//
// The Go runtime no longer advises huge pages itself (since Go 1.21.1),
// and on kernels whose transparent_hugepage setting is "madvise" (Debian's
// default) the heap then never gets any. Advise reserves a large object,
// advises the 2 MiB-aligned pages inside it, and frees it again: the heap
// hands out its lowest free pages first, so the objects allocated next
// land in the advised range. Nothing is touched, so the advice costs no
// memory until the heap grows into it.
package hugeheap
