// Package perf holds the performance-management tools: perfquery,
// ibqueryerrors, ibswportwatch, and the deprecated check and clear scripts
// (ibcheck*, ibclear*, ibdatacount*), all on pkg/mad's typed PMA access.
package perf
