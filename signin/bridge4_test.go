package signin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/rpsig"
	"worldid/internal/leaf/ratelimit"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testRPKey is the signing key of IDKit's published sign_request vector
// (bridge/rpsig/testdata/rp_signature.json), whose random bytes are
// 00 01 … 1f and whose nonce is vectorNonce.
const (
	testRPKey   = "abababababababababababababababababababababababababababababababab"
	vectorNonce = "0x008ae1aa597fa146ebd3aa2ceddf360668dea5e526567e92b0321816a4e895bd"
)

// countingReader yields 0, 1, 2, … (the vector's random bytes first).
type countingReader struct{ n byte }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

// TestProofRequestGolden: the 4.0 proof_request of a sign-in with a fixed
// key, clock and randomness is the golden JSON; its nonce is the published
// vector's for the same random bytes, and its signature recovers to the
// key's address over IDKit's message for the empty action.
func TestProofRequestGolden(t *testing.T) {
	app := record.App{ID: testApp, RPID: "rp_0123456789abcdef", RPSigningKey: testRPKey}
	pr, nonce, err := proofRequest(&countingReader{}, time.Unix(1_700_000_000, 0), app, signalOf([]byte("request-id")))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(pr, "", "  ")
	got = append(got, '\n')
	const golden = "testdata/proof_request.golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("proof_request differs from %s (%v):\n%s", golden, err, got)
	}
	if pr.Nonce != vectorNonce || "0x"+hex.EncodeToString(nonce[:]) != vectorNonce || pr.ExpiresAt-pr.CreatedAt != 300 {
		t.Fatalf("nonce %s, lifetime %d", pr.Nonce, pr.ExpiresAt-pr.CreatedAt)
	}
	sig, _ := hex.DecodeString(strings.TrimPrefix(pr.Signature, "0x"))
	action := ""
	signer, err := rpsig.RecoverAddress(rpsig.Digest(rpsig.Message(nonce, pr.CreatedAt, pr.ExpiresAt, &action)), [65]byte(sig))
	key, _ := rpsig.ParsePrivateKey(testRPKey)
	if err != nil || signer != key.Address() {
		t.Fatalf("signature recovers to %x (%v), not the key's %x", signer, err, key.Address())
	}
}

// fakeCheckerV4 accepts a 4.0 proof whose first word is proofV4For the
// claim's rp_id, action, nonce and signal hash: the wiring is tested, not
// the cryptography (World's 4.0 vectors are for nonces a sign-in cannot
// draw; registry tests check those).
type fakeCheckerV4 struct{}

func proofV4For(rpID uint64, action, nonce, signalHash [32]byte) [32]byte {
	return sha256.Sum256(bytes.Join([][]byte{binary.BigEndian.AppendUint64(nil, rpID), action[:], nonce[:], signalHash[:]}, nil))
}

func (fakeCheckerV4) CheckClaimV4(_ context.Context, c record.ClaimV4) error {
	if c.Proof[0] != proofV4For(c.RPID, c.Action, c.Nonce, c.SignalHash) || c.Environment != "production" || c.IssuerSchemaID != 1 {
		return &record.ProofError{Code: record.CodeVerificationFailed, Detail: "does not verify"}
	}
	return nil
}

// newBridgeEnvV4 is the bridge environment with 4.0 checks and an RP
// signing key for the test app.
func newBridgeEnvV4(t *testing.T) *bridgeEnv {
	e := newBridgeEnv(t, ratelimit.Rate{})
	e.f.checkerV4 = fakeCheckerV4{}
	if _, err := e.store.UpdateApp(t.Context(), testApp, func(a *record.App) error { a.RPSigningKey = testRPKey; return nil }); err != nil {
		t.Fatal(err)
	}
	e.store.base = e.store.lsn()
	return e
}

// answerV4For is a wallet's 4.0 answer to the proof request pr, as proved
// for rpID (the request's own, or another).
func answerV4For(t *testing.T, pr *bridge.ProofRequest, rpID string) bridge.Response {
	t.Helper()
	rp, err := record.RPIDNumber(rpID)
	if err != nil || pr.Action == nil {
		t.Fatalf("rp_id %s: %v; action %v", rpID, err, pr.Action)
	}
	action, err1 := oprfproof.ParseWord(*pr.Action)
	nonce, err2 := oprfproof.ParseWord(pr.Nonce)
	if err1 != nil || err2 != nil || len(pr.ProofRequests) != 1 {
		t.Fatalf("proof request %+v", pr)
	}
	signal := semaphore.HashSignal(pr.ProofRequests[0].Signal)
	p := proofV4For(rp, action, nonce, signal.Bytes())
	return bridge.Response{ProofResponse: &bridge.ProofResponse{ID: pr.ID, Version: 1, Responses: []bridge.ResponseItem{{
		Identifier: "proof_of_human", IssuerSchemaID: 1, Nullifier: "0x2a", ExpiresAtMin: pr.CreatedAt,
		Proof: []string{"0x" + hex.EncodeToString(p[:]), "0x1", "0x2", "0x3", "0x4"},
	}}}}
}

// TestBridgeSigninV4: an app with an RP signing key asks for a 4.0 proof
// beside the 3.0 request (allow_legacy_proofs); a 4.0 answer for the
// request approves the sign-in, with the 4.0 nullifier as the subject.
func TestBridgeSigninV4(t *testing.T) {
	e := newBridgeEnvV4(t)
	b, conn := e.page(t)
	req, err := e.wallet.Fetch(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	pr := req.ProofRequest
	pending, _ := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
	if pr == nil || req.AllowLegacyProofs == nil || !*req.AllowLegacyProofs || pr.RPID != "rp_0123456789abcdef" ||
		pr.ProofRequests[0].Signal != signalOf(pending.ID) || req.Signal != hashedSignal(pending.ID) ||
		pr.Nonce != "0x"+hex.EncodeToString(pending.Bridge.Nonce) {
		t.Fatalf("bridge request %+v, proof request %+v", req, pr)
	}
	if err := e.wallet.Answer(context.Background(), conn, rand.Reader, answerV4For(t, pr, pr.RPID)); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("after the 4.0 answer: %+v", s)
	}
	w := e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "https://rp.example/cb?code=code-for-0x") ||
		!strings.HasSuffix(loc, "2a") {
		t.Fatalf("finish: %d %s", w.Code, loc)
	}
}

// TestBridgeSigninV4Refused: a 4.0 answer proved for another rp_id, a
// changed action or nonce, or another credential is refused and nothing
// is stored; a 3.0 answer to the same request still approves.
func TestBridgeSigninV4Refused(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(t *testing.T, pr *bridge.ProofRequest) bridge.Response
	}{
		{"another rp", func(t *testing.T, pr *bridge.ProofRequest) bridge.Response {
			return answerV4For(t, pr, "rp_fedcba9876543210")
		}},
		{"another action", func(t *testing.T, pr *bridge.ProofRequest) bridge.Response {
			other := *pr
			a := "0x" + strings.Repeat("0", 63) + "1"
			other.Action = &a
			return answerV4For(t, &other, pr.RPID)
		}},
		{"another nonce", func(t *testing.T, pr *bridge.ProofRequest) bridge.Response {
			other := *pr
			other.Nonce = "0x01"
			return answerV4For(t, &other, pr.RPID)
		}},
		{"another credential", func(t *testing.T, pr *bridge.ProofRequest) bridge.Response {
			r := answerV4For(t, pr, pr.RPID)
			r.ProofResponse.Responses[0].Identifier, r.ProofResponse.Responses[0].IssuerSchemaID = "passport", 9303
			return r
		}},
		{"a session proof", func(t *testing.T, pr *bridge.ProofRequest) bridge.Response {
			r := answerV4For(t, pr, pr.RPID)
			sid := "session_x"
			r.ProofResponse.SessionID = &sid
			return r
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newBridgeEnvV4(t)
			b, conn := e.page(t)
			req, err := e.wallet.Fetch(context.Background(), conn)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.wallet.Answer(context.Background(), conn, rand.Reader, c.answer(t, req.ProofRequest)); err != nil {
				t.Fatal(err)
			}
			if s := e.state(t, b); s.State != stateRefused || e.store.writes() != 0 {
				t.Fatalf("state %+v, %d writes", s, e.store.writes())
			}
		})
	}
	t.Run("a 3.0 answer", func(t *testing.T) {
		e := newBridgeEnvV4(t)
		b, conn := e.page(t)
		e.answer(t, conn, goodProof)
		if s := e.state(t, b); s.State != stateDone {
			t.Fatalf("state %+v", s)
		}
	})
}

// TestBridgeWithoutV4: without a key, or without a 4.0 checker, the
// bridge request is World ID 3.0 only.
func TestBridgeWithoutV4(t *testing.T) {
	noKey := newBridgeEnv(t, ratelimit.Rate{})
	noKey.f.checkerV4 = fakeCheckerV4{}
	noChecker := newBridgeEnvV4(t)
	noChecker.f.checkerV4 = nil
	for name, e := range map[string]*bridgeEnv{"no key": noKey, "no checker": noChecker} {
		b, conn := e.page(t)
		req, err := e.wallet.Fetch(context.Background(), conn)
		pending, _ := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
		if err != nil || req.ProofRequest != nil || req.AllowLegacyProofs != nil || len(pending.Bridge.Nonce) != 0 {
			t.Errorf("%s: %+v %v", name, req, err)
		}
	}
}
