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
// JSON store's files to report what junk added. Nothing here writes a
// store directly.
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
