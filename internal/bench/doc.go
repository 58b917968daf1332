// Package bench is worldid's load and abuse tooling, the command
// cmd/worldid-bench, kept out of the binary operators deploy: Main parses
// the flags, prepares each scenario (an in-process server or -server, an
// app, wallet identities, proofs) and runs it; the abuse scenario
// (abusecommand.go) starts `worldid serve` as a child process and a junk
// flood as another (`worldid-bench -flood`).
//
// Its load generator: N concurrent clients call one operation in a closed
// loop (or at an open-loop rate) for a fixed duration, and the result
// reports throughput, latency percentiles (p50, p90, p99, max) and errors,
// as a table or JSON. Without -server a scenario starts its server in
// process through internal/server; abuse starts it as a child process
// (rate limits on) so that the server's memory is its own, and reads the
// JSON store's files to report what junk added. One benchmark tool writes
// a store directly, and only one no server has open: MintCodes
// (-mint-codes) creates an app and authorization codes in a stopped
// server's data directory, as finished sign-ins would, so that the token
// scenario (-codes) can redeem thousands without one proof per code; the
// same -codes file format feeds codes from another provider to the same
// load generator. It is not reachable from the worldid binary.
//
// CPU accounting: with -server-pid (or an in-process server) each result
// carries the process's CPU time per request (/proc), which other load on
// a shared machine inflates far less than the request rate; -rs256 also
// times one RS256 signature's thread CPU, the unit /token is measured in;
// -cpuprofile writes a pprof profile of the timed phase.
//
// Latencies are recorded exactly (one duration per call), so percentiles
// are exact order statistics, not histogram estimates. Progress goes to a
// separate writer (stderr) once per second.
//
// Flood, ProcMemory, ReadStoreUsage and AbuseReport serve the abuse
// scenario: junk sent as fast as the server answers, the server
// process's RSS and peak RSS from /proc, and the JSON store's acknowledged
// LSN and bytes on disk, so a report can say what junk cost.
//
// The generator does not open connections itself: each scenario supplies the operation
// (normally an HTTP request through a shared http.Client whose transport
// keeps MaxIdleConnsPerHost at least the client count).
package bench
