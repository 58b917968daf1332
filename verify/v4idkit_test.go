package verify

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"worldid/internal/vectors"
)

// newV4Recording is the endpoint with a CheckerV4 that records claims.
func newV4Recording(t *testing.T) (*env, *recordingV4) {
	t.Helper()
	chk := &recordingV4{}
	return serveV4(t, testStart, chk), chk
}

// TestActionFieldIDKit: a 4.0 uniqueness action reaches the checker as
// the field element idkit-core 4.3.0 derives from the string (its UTF-8
// bytes, hex-looking or not), not as hashSignal, which differs for
// hex-looking actions.
func TestActionFieldIDKit(t *testing.T) {
	var f vectors.IDKitActions
	vectors.Load(t, "idkit_actions.json", &f)
	c := vectors.NewCounter(t, "idkit_actions.json")
	e, chk := newV4Recording(t)
	differ := 0
	for _, v := range f.Actions {
		action, _ := json.Marshal(v.Action)
		body := `{"protocol_version":"4.0","nonce":"0x01","action":` + string(action) + `,"responses":[` + v4Item + `]}`
		if len(body) > maxBody {
			t.Fatalf("action of %d bytes does not fit a body", len(v.Action))
		}
		wantSuccess(t, e.post("/api/v4/verify/"+testRPID, body))
		if got := canonicalHex(chk.claims[len(chk.claims)-1].Action); got != v.ActionField {
			t.Errorf("action %q: field %s, IDKit %s", v.Action, got, v.ActionField)
		}
		if v.ActionField != v.HashSignal {
			differ++
		}
		c.Inc()
	}
	if differ == 0 {
		t.Error("idkit_actions.json has no action whose field differs from hashSignal")
	}
}

// TestSessionConfusion: a uniqueness proof cannot pass as a session
// proof. Only IDKit's session_ form is a session id (no number, no zero
// commitment, the seed's 0x01 prefix), and the checker sees the session
// input, so a uniqueness action (prefix 0x00) is refused by the registry
// (TestSessionVectorV4 "action prefix 00").
func TestSessionConfusion(t *testing.T) {
	e, chk := newV4Recording(t)
	item := strings.Replace(v4Item, `"nullifier":"0x0a0a"`, `"session_nullifier":["0x0b","0x020c"]`, 1)
	post := func(sessionID string) *httptest.ResponseRecorder {
		return e.post("/api/v4/verify/"+testRPID, `{"protocol_version":"4.0","nonce":"1","session_id":"`+sessionID+`","responses":[`+item+`]}`)
	}
	seed := "01" + strings.Repeat("ab", 31)
	for _, id := range []string{"0", "1", "0x00", "0x07", strings.Repeat("0", 64),
		"session_" + strings.Repeat("0", 64) + seed,                  // commitment zero
		"session_" + strings.Repeat("0", 63) + "7" + "00" + seed[2:], // seed without the session prefix
		"session_" + strings.Repeat("0", 63) + "7", "session_create", "create"} {
		wantError(t, post(id), http.StatusBadRequest, codeValidation, "session_id")
	}
	before := len(chk.claims)
	wantStatus(t, post(testSessionID), http.StatusOK)
	if len(chk.claims) != before+1 || chk.claims[before].SessionID == [32]byte{} {
		t.Fatalf("session claim %+v", chk.claims[before:])
	}
}

// TestSybilScore: a Selfie Check item's sybil_score (idkit-core 4.3) is
// accepted and echoed in its result; a non-integer is a validation_error.
func TestSybilScore(t *testing.T) {
	e, _ := newV4Recording(t)
	for _, score := range []int64{42, 0, -3} {
		it := v4ItemWith(`"nullifier"`, fmt.Sprintf(`"sybil_score":%d,"nullifier"`, score))
		r := wantSuccess(t, e.post("/api/v4/verify/"+testRPID, v4Body("", it)))
		if r.Results[0].SybilScore == nil || *r.Results[0].SybilScore != score {
			t.Fatalf("score %d: %+v", score, r.Results[0])
		}
	}
	w := e.post("/api/v4/verify/"+testRPID, v4Body(""))
	if strings.Contains(w.Body.String(), "sybil_score") {
		t.Fatalf("no score sent, one echoed: %s", w.Body)
	}
	for _, bad := range []string{`"x"`, `1.5`, `{}`} {
		wantError(t, e.post("/api/v4/verify/"+testRPID, v4Body("", v4ItemWith(`"nullifier"`, `"sybil_score":`+bad+`,"nullifier"`))),
			http.StatusBadRequest, codeValidation, "responses[0].sybil_score")
	}
}

// TestEmptyAction: the action may be empty (sign-in, IDKit 4's legacy
// results) but must be present, in both protocols.
func TestEmptyAction(t *testing.T) {
	e, chk := newV4Recording(t)
	w := e.post(rpPath, `{"protocol_version":"3.0","nonce":"n","action":"",`+items(validItem)+`}`)
	if r := wantSuccess(t, w); r.Action != "" {
		t.Fatalf("3.0: %s", w.Body)
	}
	if c := e.checker.seen(); c[len(c)-1].Action != "" {
		t.Fatalf("3.0 claim action %q", c[len(c)-1].Action)
	}
	wantSuccess(t, e.post(rpPath, `{"protocol_version":"4.0","nonce":"1","action":"","responses":[`+v4Item+`]}`))
	if got := canonicalHex(chk.claims[len(chk.claims)-1].Action); got != canonicalHex(actionField("")) {
		t.Fatalf("4.0 empty action field %s", got)
	}
	wantError(t, e.post(rpPath, `{"protocol_version":"3.0","nonce":"n",`+items(validItem)+`}`), http.StatusBadRequest, codeValidation, "action")
	wantError(t, e.post(rpPath, `{"protocol_version":"4.0","nonce":"1","responses":[`+v4Item+`]}`), http.StatusBadRequest, codeValidation, "action")
}

// TestUpperHexNonce: a 0X nonce is the number JavaScript's BigInt reads.
func TestUpperHexNonce(t *testing.T) {
	e, chk := newV4Recording(t)
	wantSuccess(t, e.post(rpPath, `{"protocol_version":"4.0","nonce":"0X1F","action":"vote","responses":[`+v4Item+`]}`))
	if n := chk.claims[len(chk.claims)-1].Nonce; n[31] != 0x1f || n[30] != 0 {
		t.Fatalf("nonce %x", n)
	}
}

// TestReplayCanonical: the nullifier limit keys on the nullifier's value,
// so the same proof with its nullifier spelled differently cannot verify
// twice.
func TestReplayCanonical(t *testing.T) {
	e, _ := newV4Recording(t)
	e.store.setLimit("vote", "production", 1)
	wantSuccess(t, e.post(rpPath, v4Body("")))
	for _, spelling := range []string{"0x0A0A", "0x000a0a", "0X0a0a", "2570", "0a0a"} {
		t.Run(spelling, func(t *testing.T) {
			w := e.post(rpPath, v4Body("", v4ItemWith(`"0x0a0a"`, `"`+spelling+`"`)))
			if w.Code == http.StatusOK {
				t.Fatalf("re-encoded nullifier verified again: %s", w.Body)
			}
		})
	}
	if n := e.store.count("vote", "production", "0x"+strings.Repeat("0", 60)+"0a0a"); n != 1 {
		t.Fatalf("recorded %d times", n)
	}
}
