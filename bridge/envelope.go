package bridge

// Envelope is the body of POST /request, GET /request/{id} and
// PUT /response/{id}: an IV and an AES-256-GCM ciphertext‖tag, each in
// standard base64. The relay stores it as it came, opaque.
type Envelope struct {
	IV      string `json:"iv"`
	Payload string `json:"payload"`
}

// Status is a bridge request's state as GET /response/{id} reports it.
type Status string

// The states of wallet-bridge's RequestStatus (src/utils.rs).
const (
	StatusInitialized Status = "initialized" // created, not yet read by a wallet
	StatusRetrieved   Status = "retrieved"   // read by a wallet, no answer yet
	StatusCompleted   Status = "completed"   // answered; Poll.Response holds it
)

// Poll is the answer of GET /response/{id}: the status, and the wallet's
// envelope once (status completed), else null.
type Poll struct {
	Status   Status    `json:"status"`
	Response *Envelope `json:"response"`
}

// Created is the answer of POST /request.
type Created struct {
	RequestID string `json:"request_id"`
}

// CreateBody is the body of POST /request: an envelope and, optionally, the
// requester's own request id (409 if it is taken).
type CreateBody struct {
	IV        string `json:"iv"`
	Payload   string `json:"payload"`
	RequestID string `json:"request_id,omitempty"`
}
