package awk

// Substr is awk's substr(s, m, n): the characters of s at positions m to
// m+n-1, counted from 1 and clipped to s. An n of 0 or less, or a range
// outside s, gives "".
func Substr(s string, m, n int) string {
	from, to := max(m, 1), min(m+n, len(s)+1) // to is exclusive
	if from >= to {
		return ""
	}
	return s[from-1 : to-1]
}
