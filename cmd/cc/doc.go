// Package cc holds the congestion-control tools, ibccquery and ibccconfig:
// CC attributes and their blocks read and set through mad.Querier.
package cc
