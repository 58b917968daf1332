// Command worldid-bench is worldid's load and abuse tooling, kept out of
// the worldid binary that operators deploy: `worldid-bench SCENARIO...`
// loads a server (discovery, jwks, verify, signin, token, refresh) or runs
// the abuse scenario, which starts `worldid serve` as a child process and
// floods it with junk from a process of its own. The scenarios and the
// load generator are package internal/bench; this file is wiring only.
//
// Build it beside worldid (go build ./cmd/worldid-bench), so that abuse
// finds the server binary; -worldid names another one.
//
// `worldid-bench -mint-codes FILE -data DIR -n N` is a benchmark tool for
// the token scenario: with the server stopped, it writes an app and N
// authorization codes into DIR's JSON store and lists them in FILE, which
// `worldid-bench -server URL -codes FILE token` then redeems
// (doc/performance.md, "/token at one signature").
package main
