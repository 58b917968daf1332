package record

import "time"

// Leaf is one identity commitment appended to an identity tree.
type Leaf struct {
	Index      int       `json:"index"`
	Commitment string    `json:"commitment"` // canonical 0x + 64 lowercase hex
	At         time.Time `json:"at"`         // when it was inserted: its root's creation time
}

// ExternalRoot is a root of a tree kept elsewhere (e.g. World ID's own
// sequencer), added by the operator so proofs against it verify here.
type ExternalRoot struct {
	Tree  string    `json:"tree"`  // "<identifier>/<environment>"
	Root  string    `json:"root"`  // canonical 0x + 64 lowercase hex
	Depth int       `json:"depth"` // selects the published Semaphore v3 key
	At    time.Time `json:"at"`    // when the root was mined or finalized
}
