// Package simulator is the developer simulator of Sign in with World ID
// (`worldid serve -simulator`, off by default): it replaces the phone
// during development. The wait page then offers "complete with a test
// identity", a server-side page where a developer picks one of three
// deterministic test identities and the verification level (orb or
// device), or an invalid proof (a real proof for another signal); the
// proof is made by the local prover and answers the wait page's Wallet
// Bridge request like any wallet's (package internal/wallet; the built-in
// relay is reached through the server's own public listener, another relay
// directly), so the waiting tab continues by itself, and an invalid proof
// is refused by the same checks as any other (the page then offers Try
// again).
//
// The test identities exist only while the mode is on: Trees builds their
// Merkle tree in memory at start-up and the server hands Trees.Accepts to
// the registry as its TestRoots hook, so this process accepts the tree's
// root as an orb or device root (either environment) and nothing is ever
// written to the store. A restart without -simulator, or another replica
// sharing the PostgreSQL store, does not know the root and refuses their
// proofs, at sign-in and at /api/v4/verify alike. The simulator's wallet
// takes its Merkle path from Trees, not from the inclusion-proof endpoint,
// which knows stored identities only.
//
// Test identities can sign in to any app while the mode is on, so the
// simulator must not be exposed by accident: it is off by default, the
// server logs a warning at start-up when it is on, the page marks the
// identities as test identities, and it answers only loopback clients
// that came through no proxy (no Forwarded, X-Forwarded-For or X-Real-IP
// header) and name a loopback host, localhost or the base URL's host in
// Host (so a page whose DNS name is re-pointed at 127.0.0.1 cannot reach
// it); everyone else gets 404. Its form accepts only same-origin posts
// (net/http's CrossOriginProtection: Sec-Fetch-Site, else Origin against
// Host), so a web page the developer visits cannot make the browser
// approve a sign-in through it.
//
// It does not simulate a real World App: no biometrics, no credential,
// no persistence of its own.
package simulator
