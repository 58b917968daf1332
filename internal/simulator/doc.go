// Package simulator is the developer simulator of Sign in with World ID
// (`worldid serve -simulator`, off by default): it replaces the phone
// during development. The wait page then offers "complete with a test
// identity", a server-side page where a developer picks one of three
// deterministic test identities and the verification level (orb or
// device), or an invalid proof; the proof is made by the local prover and
// submitted like a wallet's (package internal/wallet, through the server's own
// public listener), so the waiting tab continues by itself, and an invalid
// proof is refused by the same checks as any other.
//
// Test identities can sign in to any app, so the simulator must not be
// exposed by accident: it is off by default, the server logs a warning at
// start-up when it is on, its identities are added to the production orb
// and device trees only in this mode, and its page answers only loopback
// clients that came through no proxy (no Forwarded, X-Forwarded-For or
// X-Real-IP header); everyone else gets 404. Turning it off again leaves
// the identities in the trees: use a throwaway data dir for development.
//
// It does not simulate a real World App: no biometrics, no credential,
// no persistence of its own.
package simulator
