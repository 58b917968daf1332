// Package bridge holds the Wallet Bridge protocol's data, as World's
// wallet-bridge relay, IDKit and the World App speak it (doc/bridge.md;
// sources: worldcoin/wallet-bridge src/routes + src/utils.rs, worldcoin/idkit
// rust/core/src/bridge.rs + crypto.rs, worldcoin/idkit-js
// packages/core/src/bridge.ts):
//
//   - Envelope, the {"iv","payload"} body every route carries, and Poll, the
//     answer of GET /response/{id};
//   - Key: AES-256-GCM sealing of a payload, a fresh 12-byte IV per
//     envelope, iv and payload in standard (padded) base64;
//   - NormalizeRequestID: the relay's request-id rule (lowercased, 16–256
//     characters of [a-z0-9-_.]);
//   - Connect: the connect URL a QR code carries
//     (https://world.org/verify?t=wld&i=…&k=…[&return_to=…][&b=…]), built
//     and parsed canonically;
//   - Request and Response: the plaintext payloads (World ID 3.0 request
//     and answer, IDKit 4's additions and its 4.0 proof_request and
//     proof_response as bridge.rs carries them).
//
// It does no I/O: the relay is bridge/relay, the HTTP clients of requester
// and wallet are bridge/client, and RP request signatures are bridge/rpsig.
// It does not verify proofs.
package bridge
