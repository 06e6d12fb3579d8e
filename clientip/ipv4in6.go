package clientip

import "net/netip"

// embeddedIPv4 returns the IPv4 address that an IPv6 address stands for,
// so that KeyByIP keys its client as that IPv4 address:
//
//   - NAT64, 64:ff9b::/96 (RFC 6052) and the local-use 64:ff9b:1::/48
//     (RFC 8215) in its /96 or /48 form: every IPv4 host behind a NAT64
//     gateway is its own client, not one /64 for all of them;
//   - 6to4, 2002::/16 (RFC 3056), whose bits 16 to 47 are the host's IPv4
//     address: one host is one client, not 65,536 /64s;
//   - Teredo, 2001::/32 (RFC 4380), whose last 32 bits are the client's
//     public IPv4 address, inverted;
//   - IPv4-compatible ::a.b.c.d (RFC 4291, deprecated), but :: and ::1.
//
// IPv4-mapped addresses (::ffff:a.b.c.d) are unmapped where they are
// parsed. Any other address is returned as it is.
func embeddedIPv4(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b:
		switch {
		case zero(4, 12): // 64:ff9b::/96
			return v4(12)
		case b[4] == 0 && b[5] == 1 && zero(6, 12): // 64:ff9b:1::/96
			return v4(12)
		case b[4] == 0 && b[5] == 1 && b[8] == 0 && zero(11, 16): // 64:ff9b:1::/48: bits 64-71 are the u octet
			return netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})
		}
	case b[0] == 0x20 && b[1] == 0x02: // 6to4
		return v4(2)
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0: // Teredo
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	case zero(0, 12) && !zero(12, 15): // ::a.b.c.d, not :: or ::1 (nor ::0.0.0.x)
		return v4(12)
	}
	return a
}
