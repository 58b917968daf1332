// Package idkittest runs World's own IDKit requester client
// (@worldcoin/idkit-core from npm, under Node) against a Wallet Bridge
// relay, for tests: IDKit 2 (idkit-core 1.x, the client the former hosted
// sign-in used) and IDKit 4 (idkit-core 4.x, WASM core). .ci/run installs
// the pinned versions into directories named by WORLDID_IDKIT2_DIR and
// WORLDID_IDKIT4_DIR; without them, or without node, Start skips the test
// and says why.
//
// The requester (idkit_requester.mjs) creates a World ID 3.0 request for an
// app, an action and a signal, prints IDKit's connect URL, polls
// until the wallet answers and prints what IDKit returns to the relying
// party. For IDKit 4 it passes an rp_context signed by bridge/rpsig.
package idkittest
