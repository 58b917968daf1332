// Package rootsource asks World's identity contracts, over Ethereum
// JSON-RPC, whether a Merkle root a proof names is valid now: the root
// source of the identity registry (registry.RootSource) for trees whose
// roots change faster than an operator could add them.
//
// Two read-only calls, ABI-encoded by hand (one uint256 argument, a static
// return), sent as eth_call against the "latest" block:
//
//   - IdentityManager (World ID 3.0, worldcoin/world-id-contracts
//     WorldIDIdentityManagerImplV1): queryRoot(uint256) returns
//     (uint256 root, uint128 supersededTimestamp, bool isValid); the root is
//     valid iff the answer names the same root and isValid — true for the
//     latest root, and for a superseded root until rootHistoryExpiry (1 hour
//     as deployed) has passed since it was superseded; an unknown root comes
//     back as root 0.
//   - Registry (World ID 4.0, worldcoin/world-id-protocol WorldIDRegistry):
//     isValidRoot(uint256) returns bool — the current root, or a root within
//     the root validity window (3600 s) of being replaced.
//
// Contracts are configured per record tree name ("orb/production",
// "world_id_4/staging", …), each on a named chain whose JSON-RPC URL the
// operator gives; a tree whose chain has no URL is not asked. Defaults
// (DefaultContracts):
//
//	orb/production         ethereum    IdentityManager  0xf7134CE138832c1456F2a91D64621eE90c2bddEa
//	orb/staging            sepolia     IdentityManager  0xb2EaD588f14e69266d1b87936b75325181377076
//	world_id_4/production  worldchain  Registry         0x0000000000aE079eB8a274cD51c0f44a9E4d67d4
//	world_id_4/staging     worldchain  Registry         0x8556d07D75025f286fe757C7EeEceC40D54FA16D
//
// (Orb identity managers on Ethereum mainnet and Sepolia: World's address
// book, docs.worldcoin.org/reference/address-book; the 4.0 registries on
// World Chain, chain id 480: world-id-protocol
// contracts/deployments/core/{production,staging}.json @bc22329f.)
//
// Answers are cached per tree and root, at most Options.CacheSize entries:
// a valid root for ValidTTL (default 30 s, well below the contracts'
// one-hour expiry, so a root is accepted at most that long after the chain
// stopped accepting it), an invalid one for InvalidTTL (default 5 s, so a
// root published a moment after a proof was refused is soon found). An
// unreachable endpoint, an HTTP or JSON-RPC error, a revert or a malformed
// answer is an error — never "valid" — and is not cached.
//
// It does not verify chain state (no light client): it trusts the
// endpoint, as the operator's choice.
package rootsource
