// Package fakechain is a stand-in Ethereum JSON-RPC endpoint for tests: it
// answers eth_call at "latest" as World's World ID 4.0 contracts on World
// Chain would — WorldIDRegistry.isValidRoot(uint256),
// CredentialSchemaIssuerRegistry.issuerSchemaIdToPubkey(uint64) and
// OprfKeyRegistry.getOprfPublicKey(uint160) (world-id-protocol
// contracts/src/core @bc22329f; TaceoLabs oprf-key-registry) — from state
// the test sets, whatever the contract address.
//
// It decodes each call as a node would (selector, one ABI word) and
// answers an unregistered issuer with zero coordinates and an unknown
// OPRF key id with the registry's UnknownId(uint160) revert, as the
// contracts do. It is test support only: nothing in the binary imports it.
package fakechain
