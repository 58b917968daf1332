// Package rootsource asks World's identity contracts, over Ethereum
// JSON-RPC, whether a Merkle root a proof names is valid now (the root
// source of the identity registry, registry.RootSource, for trees whose
// roots change faster than an operator could add them), and reads the
// World ID 4.0 trust anchors where World's WorldIDVerifier reads them
// (registry.KeySource).
//
// Four read-only calls, ABI-encoded by hand (one word argument, a static
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
//   - IssuerRegistry (world-id-protocol CredentialSchemaIssuerRegistry):
//     issuerSchemaIdToPubkey(uint64) returns Pubkey (uint256 x, uint256 y)
//     — the credential issuer's key of an issuer_schema_id; (0, 0), or any
//     zero coordinate, is unregistered, as WorldIDVerifier reads it.
//   - OPRFKeyRegistry (TaceoLabs oprf-key-registry OprfKeyRegistry):
//     getOprfPublicKey(uint160) returns BabyJubJub.Affine (uint256 x,
//     uint256 y) — the OPRF public key of an oprfKeyId, which
//     WorldIDVerifier takes to be the rp_id; it reverts UnknownId(uint160)
//     or DeletedId(uint160) for no key (read as unregistered; any other
//     revert is a failure).
//
// A key coordinate ≥ r, a return of another length, or any failure below
// is an error. Keys are named by anchor set (record.V4AnchorSet:
// "issuer_key/<environment>", "oprf_key/<environment>") and id, and the
// operator's hand-set anchors win over them (package registry).
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
//	issuer_key/production  worldchain  IssuerRegistry   0x941239840F4d9668da8be76b568e836b50685d2c
//	issuer_key/staging     worldchain  IssuerRegistry   0x9037125Ae10e9E89fDbe7001228289462EFA3eF3
//	oprf_key/production    worldchain  OPRFKeyRegistry  0x0D8b461799474207A3d223553d4d5e6609cb0c69
//	oprf_key/staging       worldchain  OPRFKeyRegistry  0xb2C02253ee7bFEDF50F5D015658857099980E91F
//
// (Orb identity managers on Ethereum mainnet and Sepolia: World's address
// book, docs.worldcoin.org/reference/address-book; the 4.0 registries and
// credential schema issuer registries on World Chain, chain id 480 (the
// proxies): world-id-protocol contracts/deployments/core/
// {production,staging}.json @bc22329f; the OPRF key registries:
// contracts/deployments/oprf-key-registry/{production,staging}.json
// @bc22329f; the calls: contracts/src/core/WorldIDVerifier.sol,
// CredentialSchemaIssuerRegistry.sol @bc22329f.)
//
// Answers are cached per tree and root (per set and id for keys), at most
// Options.CacheSize entries: a valid root or a registered key for ValidTTL
// (default 30 s, well below the contracts'
// one-hour expiry, so a root is accepted at most that long after the chain
// stopped accepting it), an invalid root or a missing key for InvalidTTL
// (default 5 s, so a root published a moment after a proof was refused is
// soon found). An
// unreachable endpoint, an HTTP or JSON-RPC error, a revert or a malformed
// answer is an error — never "valid" — and is not cached.
//
// It does not verify chain state (no light client): it trusts the
// endpoint, as the operator's choice.
package rootsource
