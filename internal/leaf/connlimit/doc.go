// Package connlimit bounds the connections a listener keeps open: in total,
// and per client address, so that one address holding thousands of
// slow-body connections cannot take every file descriptor from the others.
//
// A connection over a limit is closed at once, after a plain-HTTP
// "503 Service Unavailable" with "Retry-After: 1" when the listener serves
// plain HTTP (a TLS listener just closes: nothing can be said before the
// handshake). The limit per address counts the TCP peer: behind a reverse
// proxy every connection comes from the proxy, so addresses in Exempt (the
// trusted proxies) count only toward the total.
//
// It does not limit requests (HTTP/2 streams or keep-alive requests on one
// connection), bandwidth, or connection rates; the server's timeouts bound
// how long a connection can be held (doc/design.md §8).
package connlimit
