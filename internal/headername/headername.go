// Package headername tells a header field name from a string no request
// can carry as one, for the options that name a header.
package headername

import "strings"

// Valid reports whether name is a header field name: RFC 9110's token, one
// or more of the visible ASCII characters but the delimiters.
func Valid(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
