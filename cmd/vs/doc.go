// Package vs holds the tools of the vendor-specific classes: ibping and
// ibsysstat (OpenIB's ping and sysstat classes, clients and -S servers)
// and vendstat (Mellanox's vendor attributes).
package vs
