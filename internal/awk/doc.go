// Package awk holds the pieces of awk's semantics that infiniband-diags'
// scripts rely on and their ports in ibtool reproduce, so that a script's
// odd input gives what the script gives.
package awk
