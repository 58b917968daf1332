// Package forwarded recovers the client address of requests that arrive
// through trusted reverse proxies.
//
// When the direct peer (http.Request.RemoteAddr) is inside one of the
// operator's trusted prefixes, the X-Forwarded-For chain is walked from the
// right, skipping addresses that are themselves trusted proxies; the first
// untrusted address is the client, and RemoteAddr is rewritten to it (port
// 0) for every handler and log line downstream. The rightmost-untrusted
// rule matters: everything left of it was written by the client and can be
// forged. Requests from untrusted peers are passed through untouched and
// their X-Forwarded-For is ignored.
//
// It does not read the RFC 7239 Forwarded header or X-Real-IP, and with no
// trusted prefixes configured it does nothing.
package forwarded
