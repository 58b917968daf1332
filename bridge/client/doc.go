// Package client speaks the Wallet Bridge over HTTP for both ends
// (doc/bridge.md): a requester creates an encrypted request at a relay
// (Create: a fresh key and IV from the caller's randomness; the key is
// returned to the caller, never sent) and polls for the answer (Poll:
// GET /response/{id}, decrypted); a wallet fetches a request named by a
// connect URL (Fetch: GET /request/{id}, decrypted) and answers it (Answer:
// encrypted under its own IV, PUT /response/{id}).
//
// Every call is bounded by its context and by MaxBody on what it reads.
// A relay's 404 is ErrGone (unknown, expired or already consumed: a
// requester replaces the request); an envelope that does not decrypt is
// bridge.ErrOpen; other answers are *StatusError. It keeps no state: the
// caller carries the key (a sign-in server, e.g., sealed in its pending
// request token).
package client
