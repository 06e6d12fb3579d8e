package hostkey

import (
	"strings"
	"unicode/utf8"
)

// toASCII maps name as IDNA's lookup profile does for full-width ASCII
// and the ideographic, full-width and half-width full stops, lower-cases
// it, and writes each label that is still not ASCII in Punycode with the
// "xn--" prefix (RFC 3492). Other Unicode mappings (NFC, compatibility
// forms) are left out: a name they would change keeps a key of its own,
// which only net/http's own mapping could merge.
func toASCII(name string) string {
	if len(name) > 1024 { // no host is that long: nothing to merge, no quadratic work
		return strings.ToLower(name)
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '\u3002' || r == '\uff0e' || r == '\uff61':
			r = '.'
		case r >= '\uff01' && r <= '\uff5e':
			r -= 0xfee0
		}
		b.WriteRune(r)
	}
	labels := strings.Split(strings.ToLower(b.String()), ".")
	for i, l := range labels {
		if !isASCII(l) {
			labels[i] = "xn--" + punycode(l)
		}
	}
	return strings.Join(labels, ".")
}

// punycode encodes label as RFC 3492's Punycode: its ASCII code points,
// a '-' if there are any, then the deltas of the others.
func punycode(label string) string {
	const (
		base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
		initialBias, initialN        = 72, 128
	)
	runes := []rune(label)
	var out []byte
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	if basic > 0 {
		out = append(out, '-')
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	n, delta, bias, h := initialN, 0, initialBias, basic
	for h < len(runes) {
		m := int(^uint32(0) >> 1)
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := base; ; k += base {
				t := k - bias
				t = max(tmin, min(t, tmax))
				if q < t {
					break
				}
				out = append(out, digit(t+(q-t)%(base-t)))
				q = (q - t) / (base - t)
			}
			out = append(out, digit(q))
			bias = adapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out)
}
