//go:build cgo

package rdmacm

// The C library's getaddrinfo orders the wildcards (PassiveAddrs); only
// this file calls C.

// #include <stdlib.h>
// #include <string.h>
// #include <sys/socket.h>
// #include <netinet/in.h>
// #include <netdb.h>
//
// // ibt_passive asks getaddrinfo(NULL, service, AI_PASSIVE) for TCP
// // stream sockets, as librdmacm's rdma_getaddrinfo converts the hints
// // of a passive RC or XRC lookup, and writes each address's family and
// // 16 address bytes to out (an IPv4 address in the first 4), up to max;
// // it returns how many, or getaddrinfo's code (negative).
// static int ibt_passive(const char *service, unsigned char *out, int *fam, int max) {
// 	struct addrinfo hints, *res, *ai;
// 	int n = 0, ret;
// 	memset(&hints, 0, sizeof hints);
// 	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
// 	hints.ai_socktype = SOCK_STREAM;
// 	hints.ai_protocol = IPPROTO_TCP;
// 	ret = getaddrinfo(NULL, service, &hints, &res);
// 	if (ret)
// 		return ret < 0 ? ret : -ret;
// 	for (ai = res; ai && n < max; ai = ai->ai_next) {
// 		if (ai->ai_family == AF_INET6) {
// 			memcpy(out + 16 * n, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
// 		} else if (ai->ai_family == AF_INET) {
// 			memcpy(out + 16 * n, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
// 		} else {
// 			continue;
// 		}
// 		fam[n++] = ai->ai_family;
// 	}
// 	freeaddrinfo(res);
// 	return n;
// }
import "C"

import (
	"net/netip"
	"strconv"
	"unsafe"
)

var passiveLookup = cPassive

// cPassive is PassiveAddrs through the C library.
func cPassive(port uint16) ([]netip.AddrPort, error) {
	const max = 8
	var out [16 * max]C.uchar
	var fam [max]C.int
	service := C.CString(strconv.Itoa(int(port)))
	defer C.free(unsafe.Pointer(service))
	n := int(C.ibt_passive(service, &out[0], &fam[0], max))
	if n < 0 {
		return nil, &AddrInfoError{Code: n, Msg: C.GoString(C.gai_strerror(C.int(n)))}
	}
	var addrs []netip.AddrPort
	for i := range n {
		var b [16]byte
		for j := range b {
			b[j] = byte(out[16*i+j])
		}
		a := netip.AddrFrom16(b)
		if fam[i] == C.AF_INET {
			a = netip.AddrFrom4([4]byte(b[:4]))
		}
		addrs = append(addrs, netip.AddrPortFrom(a, port))
	}
	return addrs, nil
}
