// Package ratelimit is an in-memory, per-key token bucket (the generic
// cell rate algorithm: per key only the theoretical arrival time of the
// next request is kept) with a bounded number of keys, and the per-client
// key of an HTTP request (its address; IPv6 by /64).
//
// It is used where a server must not let one client spend a shared
// resource: credential refresh (package refresh: per client address and
// per identity commitment) and sign-in's bridge requests (package signin:
// per client address).
//
// Bounds: at most maxKeys keys. Keys whose bucket has refilled are swept
// (at most once a second) when the table is full; if every key is still
// active, an arbitrary one forgets its debt, so a flood of more than
// maxKeys addresses cannot lock others out nor grow memory, at the price
// of a best-effort limit for the evicted keys. State is per process: N
// replicas give a client up to N times the rate.
//
// Not done: no persistence, no distributed limit.
package ratelimit
