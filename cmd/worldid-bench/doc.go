// Command worldid-bench is worldid's load and abuse tooling, kept out of
// the worldid binary that operators deploy: `worldid-bench SCENARIO...`
// loads a server (discovery, jwks, verify, signin, token, refresh) or runs
// the abuse scenario, which starts `worldid serve` as a child process and
// floods it with junk from a process of its own. The scenarios and the
// load generator are package internal/bench; this file is wiring only.
//
// Build it beside worldid (go build ./cmd/worldid-bench), so that abuse
// finds the server binary; -worldid names another one.
package main
