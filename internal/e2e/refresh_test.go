package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"worldid/admin"
	"worldid/babyjub"
	"worldid/credential"
	"worldid/field"
	"worldid/internal/vectors"
	"worldid/internal/wallet"
	"worldid/record"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	secpfr "github.com/consensys/gnark-crypto/ecc/secp256k1/fr"
)

func refreshRequest(t *testing.T, ctx context.Context, w *wallet.Wallet, sub string) *wallet.RefreshRequest {
	pk, err := w.ProvingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &wallet.RefreshRequest{IssuerURL: w.Server, Identity: w.Identity, ProvingKey: pk, Sub: sub, Now: time.Now()}
}

// refreshBothModes imports the wallet's signup record and an Orb key, then
// refreshes with a PCP and again credential-only; it returns the pinned
// sub. The second refresh returns the credential the first issued (issue
// 17: not a general re-issuance endpoint), and re-importing the signup
// with another verified_at does not move genesis_issued_at, the time of
// first issuance.
func refreshBothModes(t *testing.T, ctx context.Context, p *serverProc, w *wallet.Wallet) string {
	orbKey, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Identity.Commitment()
	req := refreshRequest(t, ctx, w, "0x"+strings.Repeat("42", 8))
	issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, p.public)
	if err != nil {
		t.Fatal(err)
	}
	var refused *wallet.RefreshError
	if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Code != "NO_SIGNUP_RECORD" {
		t.Fatalf("refresh before the signup import: %v", err)
	}
	importSignup := func(verifiedAt int64) {
		signup := record.Signup{IDCommitment: field.Format(&c), SignupID: "e2e-signup", VerifiedAt: time.Unix(verifiedAt, 0).UTC()}
		if err := p.adminClient.ImportSignups(ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
			t.Fatal(err)
		}
	}
	importSignup(1_700_000_000)
	if err := p.adminClient.AddOrbKey(ctx, admin.OrbKeyRequest{OrbID: "orb-e2e", PublicKeyPEM: string(wallet.OrbKeyPEM(&orbKey.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	if req.PCP, err = wallet.BuildTestPCP(rand.Reader, orbKey, "orb-e2e", "e2e-signup", time.Now()); err != nil {
		t.Fatal(err)
	}
	// Each x-zkp-proof is single use and binds its timestamp (seconds), so
	// every attempt below proves for a later second.
	start := time.Now().Unix()
	req.Now = req.Now.Add(time.Second)
	pcpCred, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		t.Fatalf("PCP refresh: %v", err)
	}
	if g := int64(pcpCred.GenesisIssuedAt); g < start-1 || g > time.Now().Unix() || pcpCred.Claims[0].IsZero() {
		t.Errorf("credential %+v: genesis_issued_at is not the time of first issuance", pcpCred)
	}
	importSignup(1_600_000_000)
	req.PCP, req.Now = nil, req.Now.Add(time.Second)
	again, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		t.Fatalf("credential-only repeat refresh: %v", err)
	}
	if again.ID != pcpCred.ID || !bytes.Equal(again.Signature, pcpCred.Signature) || again.GenesisIssuedAt != pcpCred.GenesisIssuedAt {
		t.Errorf("a repeat refresh issued another credential: %+v, first %+v", again, pcpCred)
	}
	if err := p.adminClient.SetRefresh(ctx, false); err != nil {
		t.Fatal(err)
	}
	req.Now = req.Now.Add(time.Second)
	if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Status != 503 {
		t.Errorf("refresh while disabled: %v", err)
	}
	if err := p.adminClient.SetRefresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	return req.Sub
}

// babyJubJubL is the order of BabyJubJub's prime subgroup (doc/crypto.md §d,
// babyjub doc.go; circomlib's subOrder).
var babyJubJubL, _ = new(big.Int).SetString("2736030358979909402780800718157159386076813972158567259200215660948447373041", 10)

// ---- Credential refresh ----

// multipartForm encodes text fields (name, value pairs) as multipart/form-data.
func multipartForm(t *testing.T, fields ...string) (body, contentType string) {
	return multipartBody(t, func(mw *multipart.Writer) error {
		for i := 0; i+1 < len(fields); i += 2 {
			if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// multipartBody encodes the parts build writes.
func multipartBody(t *testing.T, build func(*multipart.Writer) error) (body, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := build(mw); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), mw.FormDataContentType()
}

// withPart adds a part with the given MIME headers (name, value pairs).
func withPart(mw *multipart.Writer, content string, header ...string) error {
	h := textproto.MIMEHeader{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	w, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, content)
	return err
}

// zkpHeader encodes an x-zkp-proof JSON object given as raw text.
func zkpHeader(rawJSON string) string { return base64.StdEncoding.EncodeToString([]byte(rawJSON)) }

// importSignup enrolls the wallet's identity and returns its commitment.
func (e *hostileEnv) importSignup(t *testing.T) string {
	c := e.w.Identity.Commitment()
	idComm := field.Format(&c)
	signup := record.Signup{IDCommitment: idComm, SignupID: "signup-hostile", VerifiedAt: time.Unix(1_700_000_000, 0).UTC()}
	if err := e.p.adminClient.ImportSignups(e.ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
		t.Fatal(err)
	}
	return idComm
}

func (e *hostileEnv) refreshRequest(t *testing.T, sub string, pcp *wallet.TestPCP, now time.Time) *http.Request {
	t.Helper()
	pk, err := e.w.ProvingKey(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, err := wallet.NewRefreshHTTPRequest(e.ctx, &wallet.RefreshRequest{IssuerURL: e.p.public, Identity: e.w.Identity, ProvingKey: pk, Sub: sub, PCP: pcp, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// resend returns a sender of req with its body rewound.
func resend(req *http.Request, header ...string) func(*testing.T) reply {
	return func(t *testing.T) reply {
		r := req.Clone(req.Context())
		var err error
		if r.Body, err = req.GetBody(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return send(t, r)
	}
}

func (e *hostileEnv) hostileRefresh(t *testing.T) {
	idComm := e.importSignup(t)
	const sub1, sub2 = "0x" + "51", "0x" + "52"
	first := e.refreshRequest(t, sub1, nil, time.Now())
	ok := resend(first)(t)
	if ok.status != http.StatusOK {
		t.Fatalf("first refresh: %d %s", ok.status, ok.body)
	}
	issuer, err := wallet.FetchIssuerKey(e.ctx, hardenedClient, e.p.public)
	if err != nil {
		t.Fatal(err)
	}
	var subElem fr.Element
	subElem.SetUint64(0x51)
	if _, err := wallet.ParseRefreshResponse(ok.status, ok.body, issuer, subElem); err != nil {
		t.Fatalf("the issued credential does not check: %v", err)
	}
	t.Run("wallet against a hostile issuer", func(t *testing.T) { hostileIssuerAnswers(t, ok.body, issuer, subElem) })

	proof1 := first.Header.Get("x-zkp-proof")
	pcpRequest := e.highSPCPRequest(t, sub1)
	thirdInteger := e.thirdIntegerPCPRequest(t, sub1)
	target := e.p.public + "/api/v1/refresh?idComm=" + url.QueryEscape(idComm)
	form, formCT := multipartForm(t, "sub", sub1)
	post := func(target, body, ct string, header ...string) func(*testing.T) reply {
		return call(http.MethodPost, target, ct, body, header...)
	}
	withProof := func(body, ct string) func(*testing.T) reply { return post(target, body, ct, "x-zkp-proof", proof1) }
	badRequest := func(name string, send func(*testing.T) reply) hostileCase {
		return hostileCase{name: name, send: send, status: 400, code: "INVALID_REQUEST"}
	}
	invalidSub := func(name, sub string) hostileCase {
		body, ct := multipartForm(t, "sub", sub)
		return hostileCase{name: name, send: withProof(body, ct), status: 400, code: "INVALID_SUB"}
	}
	invalidProof := func(name, header string) hostileCase {
		return hostileCase{name: name, send: post(target, form, formCT, "x-zkp-proof", header), status: 401, code: "INVALID_PROOF"}
	}
	unknownField, unknownCT := multipartForm(t, "sub", sub1, "idComm", idComm)
	bigSign, bigSignCT := multipartBody(t, func(mw *multipart.Writer) error {
		mw.WriteField("sub", sub1)
		return withPart(mw, strings.Repeat("s", 1025), "Content-Disposition", `form-data; name="hashes.sign"; filename="hashes.sign"`)
	})
	base64Part, base64CT := multipartBody(t, func(mw *multipart.Writer) error {
		return withPart(mw, "MHg1MQ==", "Content-Disposition", `form-data; name="sub"`, "Content-Transfer-Encoding", "base64")
	})
	dupSub, dupCT := multipartForm(t, "sub", sub1, "sub", sub1)
	longSub, longCT := multipartForm(t, "sub", "0x"+strings.Repeat("0", 64<<10))
	otherSub, otherCT := multipartForm(t, "sub", sub2)
	validJSON := `{"id_commitment":"` + idComm + `","sub":"` + field.Format(&subElem) + `","timestamp":` + fmt.Sprint(time.Now().Unix()) +
		`,"merkle_root":"` + idComm + `","nullifier_hash":"` + idComm + `","proof":"0x` + strings.Repeat("0", 512) + `"}`
	host := strings.TrimPrefix(e.p.public, "http://")
	runHostile(t, e.dataDir, []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "METHOD_NOT_ALLOWED"},
		badRequest("application/json", withProof(`{"sub":"0x51"}`, "application/json")),
		badRequest("multipart without boundary", withProof(form, "multipart/form-data")),
		badRequest("no content type", withProof(form, "")),
		badRequest("missing idComm", post(e.p.public+"/api/v1/refresh", form, formCT, "x-zkp-proof", proof1)),
		badRequest("duplicate idComm", post(target+"&idComm="+url.QueryEscape(idComm), form, formCT, "x-zkp-proof", proof1)),
		badRequest("idComm equal to p", post(e.p.public+"/api/v1/refresh?idComm="+bn254R, form, formCT, "x-zkp-proof", proof1)),
		badRequest("idComm traversal", post(e.p.public+"/api/v1/refresh?idComm=..%2F..%2Fetc%2Fpasswd", form, formCT, "x-zkp-proof", proof1)),
		badRequest("unknown field", withProof(unknownField, unknownCT)),
		badRequest("duplicate sub", withProof(dupSub, dupCT)),
		badRequest("base64 transfer encoding", withProof(base64Part, base64CT)),
		badRequest("truncated body", withProof(form[:len(form)-10], formCT)),
		{name: "declared length over 32 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: callRaw(e.p.public, "POST /api/v1/refresh?idComm="+url.QueryEscape(idComm)+" HTTP/1.1\r\nHost: "+host+
				"\r\nContent-Type: "+formCT+"\r\nx-zkp-proof: "+proof1+"\r\nContent-Length: 40000000\r\n\r\n", nil)},
		{name: "streamed body over 32 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: callRaw(e.p.public, "POST /api/v1/refresh?idComm="+url.QueryEscape(idComm)+" HTTP/1.1\r\nHost: "+host+
				"\r\nContent-Type: "+formCT+"\r\nx-zkp-proof: "+proof1+"\r\nTransfer-Encoding: chunked\r\n\r\n", chunked(33<<20))},
		{name: "sub part over 64 KiB", send: withProof(longSub, longCT), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "hashes.sign over 1 KiB", send: withProof(bigSign, bigSignCT), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "missing sub", send: withProof(multipartForm(t, "encrypted_user_id", "x")), status: 400, code: "INVALID_SUB"},
		invalidSub("sub equal to p", bn254R),
		invalidSub("sub with 0X", "0X51"),
		invalidSub("sub of 65 digits", "0x"+strings.Repeat("0", 64)+"1"),
		invalidProof("missing x-zkp-proof", ""),
		invalidProof("x-zkp-proof not base64", "%%%"),
		invalidProof("x-zkp-proof unpadded", base64.RawStdEncoding.EncodeToString([]byte(validJSON+" "))),
		invalidProof("x-zkp-proof with an unknown member", zkpHeader(strings.Replace(validJSON, "{", `{"alg":"none",`, 1))),
		invalidProof("x-zkp-proof with a duplicate member", zkpHeader(strings.Replace(validJSON, "{", `{"sub":"0x01",`, 1))),
		invalidProof("x-zkp-proof id_commitment equal to p", zkpHeader(strings.Replace(validJSON, `"id_commitment":"`+idComm, `"id_commitment":"`+bn254R, 1))),
		invalidProof("x-zkp-proof that does not verify", zkpHeader(validJSON)),
		invalidProof("replayed x-zkp-proof", proof1),
		{name: "x-zkp-proof for another sub", send: withProof(otherSub, otherCT), status: 401, code: "INVALID_PROOF"},
		// A valid proof in a request that then fails spends nothing.
		{name: "PCP signature with a third INTEGER", send: resend(thirdInteger), status: 422, code: "PCP_VALIDATION_FAILED",
			check: func(t *testing.T, r reply) {
				if !bytes.Contains(r.body, []byte("signature_encoding")) {
					t.Errorf("the message does not name the check: %s", r.body)
				}
			}},
		{name: "PCP signature with s ≥ n", send: resend(pcpRequest), status: 422, code: "PCP_VALIDATION_FAILED",
			check: func(t *testing.T, r reply) {
				if !bytes.Contains(r.body, []byte("signature_encoding")) {
					t.Errorf("the message does not name the check: %s", r.body)
				}
			}},
	})
}

// chunked is n bytes of multipart preamble (short lines, which the
// multipart reader skips) in chunked transfer coding.
func chunked(n int) io.Reader {
	const size = 1 << 20
	chunk := fmt.Sprintf("%x\r\n%s\r\n", size, strings.Repeat(strings.Repeat("p", 1022)+"\r\n", size/1024))
	return io.MultiReader(strings.NewReader(strings.Repeat(chunk, n/size)), strings.NewReader("0\r\n\r\n"))
}

// signEditedPCPRequest is a PCP refresh, signed by a new key trusted for
// orbID, whose hashes.sign is re-encoded by edit from its (r, s).
func (e *hostileEnv) signEditedPCPRequest(t *testing.T, sub, orbID string, edit func(r, s *big.Int) any) *http.Request {
	t.Helper()
	orbKey, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.p.adminClient.AddOrbKey(e.ctx, admin.OrbKeyRequest{OrbID: orbID, PublicKeyPEM: string(wallet.OrbKeyPEM(&orbKey.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	pcp, err := wallet.BuildTestPCP(rand.Reader, orbKey, orbID, "signup-hostile", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var sig struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(pcp.HashesSign, &sig); err != nil {
		t.Fatal(err)
	}
	if pcp.HashesSign, err = asn1.Marshal(edit(sig.R, sig.S)); err != nil {
		t.Fatal(err)
	}
	return e.refreshRequest(t, sub, pcp, time.Now().Add(time.Second))
}

// highSPCPRequest is a PCP refresh whose hashes.sign has s replaced by
// s + n: the same signature value, not reduced, which must be refused.
func (e *hostileEnv) highSPCPRequest(t *testing.T, sub string) *http.Request {
	return e.signEditedPCPRequest(t, sub, "orb-hostile", func(r, s *big.Int) any {
		return struct{ R, S *big.Int }{r, s.Add(s, secpfr.Modulus())}
	})
}

// thirdIntegerPCPRequest is a PCP refresh whose hashes.sign is SEQUENCE
// { r, s, INTEGER 1 }: a valid signature with a trailing element, which
// encoding/asn1 alone accepts and exact DER refuses.
func (e *hostileEnv) thirdIntegerPCPRequest(t *testing.T, sub string) *http.Request {
	return e.signEditedPCPRequest(t, sub, "orb-hostile-der", func(r, s *big.Int) any {
		return struct{ R, S, X *big.Int }{r, s, big.NewInt(1)}
	})
}

// hostileRefreshVectors sends the field_element.json vectors of the two
// refresh parsers: id_commitment as the idComm query, prefixed_hex as sub.
// A rejected value is 400 at its step; an accepted one passes it and stops
// at the x-zkp-proof: missing for idComm; for sub, a valid proof (checked
// before the body) for a sub no vector has.
func (e *hostileEnv) hostileRefreshVectors(t *testing.T) {
	var file fieldVectors
	vectors.Load(t, "field_element.json", &file)
	count := vectors.NewCounter(t, "field_element.json")
	c := e.w.Identity.Commitment()
	base := e.p.public + "/api/v1/refresh?idComm="
	form, formCT := multipartForm(t, "sub", "0x51")
	var cases []hostileCase
	for _, v := range file.IDCommitment {
		hc := hostileCase{name: "idComm " + v.Name, send: call(http.MethodPost, base+url.QueryEscape(v.Input), formCT, form), status: 401, code: "INVALID_PROOF"}
		if accept, _ := v.verdict(t); !accept {
			hc.status, hc.code = 400, "INVALID_REQUEST"
		}
		cases = append(cases, hc)
		count.Inc()
	}
	proof := e.refreshRequest(t, "0x5151", nil, time.Now()).Header.Get("x-zkp-proof")
	for _, v := range file.PrefixedHex {
		body, ct := multipartForm(t, "sub", v.Input)
		hc := hostileCase{name: "sub " + v.Name, send: call(http.MethodPost, base+field.Format(&c), ct, body, "x-zkp-proof", proof), status: 401, code: "INVALID_PROOF"}
		if accept, _ := v.verdict(t); !accept {
			hc.status, hc.code = 400, "INVALID_SUB"
		}
		cases = append(cases, hc)
		count.Inc()
	}
	runHostile(t, e.dataDir, cases)
}

// hostileIssuerAnswers: the wallet, as the issuer's client, refuses
// credentials and issuer keys that a hostile or broken issuer could send
// (doc/crypto.md §e checklist, seen from the holder's side).
func hostileIssuerAnswers(t *testing.T, okBody []byte, issuer *babyjub.PublicKey, sub fr.Element) {
	var answer struct{ Credential string }
	json.Unmarshal(okBody, &answer)
	raw, err := base64.StdEncoding.DecodeString(answer.Credential)
	if err != nil {
		t.Fatal(err)
	}
	var cred struct {
		Signature string
		Issuer    struct{ PK [2]string }
	}
	if err := json.Unmarshal(raw, &cred); err != nil {
		t.Fatal(err)
	}
	sig, err := hex.DecodeString(cred.Signature)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %q", cred.Signature)
	}
	pMinus1 := new(big.Int).Sub(fr.Modulus(), big.NewInt(1)).String()
	variants := map[string]string{
		"s + L":               strings.Replace(string(raw), cred.Signature, hex.EncodeToString(sigWithSPlusL(sig)), 1),
		"R + order-2 point":   strings.Replace(string(raw), cred.Signature, hex.EncodeToString(sigWithTorsionR(sig)), 1),
		"small-order issuer":  strings.Replace(string(raw), `"pk":["`+cred.Issuer.PK[0]+`","`+cred.Issuer.PK[1]+`"]`, `"pk":["0","`+pMinus1+`"]`, 1),
		"not canonical JSON":  strings.Replace(string(raw), `,"`, `, "`, 1),
		"another sub claimed": strings.Replace(string(raw), field.Format(&sub), "0x"+strings.Repeat("0", 63)+"2", 1),
	}
	for name, body := range variants {
		if body == string(raw) {
			t.Fatalf("%s: the variant did not change the credential", name)
		}
		answer, _ := json.Marshal(map[string]any{"success": true, "credential": base64.StdEncoding.EncodeToString([]byte(body)), "message": "ok"})
		if _, err := wallet.ParseRefreshResponse(http.StatusOK, answer, issuer, sub); err == nil {
			t.Errorf("%s: credential accepted", name)
		}
	}
	for name, pk := range map[string][2]string{
		"order-2 point":   {"0", pMinus1},
		"identity":        {"0", "1"},
		"off the curve":   {"1", "1"},
		"non-canonical x": {"0" + cred.Issuer.PK[0], cred.Issuer.PK[1]},
		"coordinate ≥ p":  {cred.Issuer.PK[0], new(big.Int).Add(fr.Modulus(), big.NewInt(1)).String()},
		"valid (control)": cred.Issuer.PK,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"issuer": map[string]any{"pk": pk}})
		}))
		_, err := wallet.FetchIssuerKey(context.Background(), srv.Client(), srv.URL)
		srv.Close()
		if control := name == "valid (control)"; (err == nil) != control {
			t.Errorf("issuer key %s: err = %v", name, err)
		}
	}
}

// sigWithSPlusL adds L to s (bytes 32..64, little-endian).
func sigWithSPlusL(sig []byte) []byte {
	out := bytes.Clone(sig)
	s := new(big.Int).SetBytes(reversed(sig[32:]))
	s.Add(s, babyJubJubL)
	copy(out[32:], reversed(s.FillBytes(make([]byte, 32))))
	return out
}

// sigWithTorsionR replaces R by R + (0, −1), the point of order 2: that
// is (−x, −y), so y becomes p − y and the sign of x flips (doc/crypto.md §d).
func sigWithTorsionR(sig []byte) []byte {
	out := bytes.Clone(sig)
	enc := reversed(sig[:32])
	sign := enc[0] & 0x80
	enc[0] &^= 0x80
	y := new(big.Int).SetBytes(enc)
	y.Sub(fr.Modulus(), y)
	negY := y.FillBytes(make([]byte, 32))
	negY[0] |= sign ^ 0x80
	copy(out[:32], reversed(negY))
	return out
}

func reversed(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

// TestRefreshAbuse holds the refresh endpoint's hostile edges against the binary, with
// the default rate limits: strangers naming an identity's public idComm do
// not spend its budget; a request with a valid proof that then fails
// writes nothing; junk 25 MiB bodies, with or without a valid proof, do
// not make the server hold them.
func TestRefreshAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	e := &hostileEnv{ctx: ctx, p: p, dataDir: dataDir, w: keyedWallet(t, ctx, p)}
	idComm := e.importSignup(t)
	target := p.public + "/api/v1/refresh?idComm=" + url.QueryEscape(idComm)
	form, formCT := multipartForm(t, "sub", "0x51")

	t.Run("strangers cannot lock an identity out", func(t *testing.T) {
		before := acknowledgedWrites(t, dataDir)
		for i := range 10 { // twice the identity's burst of 5
			r := call(http.MethodPost, target, formCT, form, "x-zkp-proof", zkpHeader(`{"junk":`+fmt.Sprint(i)+`}`))(t)
			if r.status != http.StatusUnauthorized {
				t.Fatalf("junk refresh %d: %d %s", i, r.status, r.body)
			}
		}
		if r := resend(e.refreshRequest(t, "0x51", nil, time.Now()))(t); r.status != http.StatusOK {
			t.Fatalf("the identity's own refresh after junk naming it: %d %s", r.status, r.body)
		}
		if n := acknowledgedWrites(t, dataDir) - before; n != 1 {
			t.Errorf("%d acknowledged writes for 10 junk requests and one refresh, want 1", n)
		}
	})

	stranger := keyedWallet(t, ctx, p) // no signup record
	t.Run("a valid proof that then fails writes nothing", func(t *testing.T) {
		req := e.refreshRequestFor(t, stranger, "0x51", nil)
		runHostile(t, dataDir, []hostileCase{{name: "no signup record", send: resend(req), status: 404, code: "NO_SIGNUP_RECORD"}})
	})

	t.Run("junk bodies are not held", func(t *testing.T) {
		stranger := keyedWallet(t, ctx, p) // a full identity budget for 5 requests
		pid := p.cmd.Process.Pid
		body, ct, hashesJSON := junkPCPBody(t)
		pk, err := stranger.ProvingKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var sub fr.Element
		sub.SetUint64(0x51)
		validProof, err := wallet.RefreshProof(pk, stranger.Identity, sub, time.Now().Unix(), hashesJSON)
		if err != nil {
			t.Fatal(err)
		}
		c := stranger.Identity.Commitment()
		strangerTarget := p.public + "/api/v1/refresh?idComm=" + url.QueryEscape(field.Format(&c))
		// Start the peak at the current RSS: the start-up peak (the proving
		// key is read then) would hide anything smaller.
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			t.Skipf("cannot reset the peak RSS: %v", err)
		}
		peak0 := procStatusKiB(t, pid, "VmHWM")
		writes0 := acknowledgedWrites(t, dataDir)
		for _, round := range []struct {
			name, target, proof string
			status              int
		}{
			{"no proof", target, "", http.StatusUnauthorized},
			{"valid proof", strangerTarget, validProof, http.StatusNotFound}, // read in full, then NO_SIGNUP_RECORD
		} {
			statuses := make(chan int, 5)
			for range 5 {
				go func() { statuses <- postRaw(round.target, ct, round.proof, body) }()
			}
			for range 5 {
				if s := <-statuses; s != round.status {
					t.Errorf("%s: 25 MiB junk body answered %d, want %d", round.name, s, round.status)
				}
			}
		}
		grew := procStatusKiB(t, pid, "VmHWM") - peak0
		t.Logf("peak RSS %d → %d KiB: grew %d KiB for 10 junk bodies of %.1f MiB, 5 at a time", peak0, peak0+grew, grew, float64(len(body))/(1<<20))
		if grew > 48<<10 {
			t.Errorf("peak RSS grew %d MiB: request bodies are held in memory", grew>>10)
		}
		if n := acknowledgedWrites(t, dataDir) - writes0; n != 0 {
			t.Errorf("junk bodies made %d acknowledged writes", n)
		}
	})
}

// TestRefreshReissueFlag: with -refresh-reissue every refresh issues a new
// credential, and genesis_issued_at stays the first issuance.
func TestRefreshReissueFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir, "-refresh-reissue")
	e := &hostileEnv{ctx: ctx, p: p, dataDir: dataDir, w: keyedWallet(t, ctx, p)}
	e.importSignup(t)
	issuer, err := wallet.FetchIssuerKey(ctx, hardenedClient, p.public)
	if err != nil {
		t.Fatal(err)
	}
	var sub fr.Element
	sub.SetUint64(0x51)
	var creds []*credential.Credential
	for i := range 2 {
		r := resend(e.refreshRequest(t, "0x51", nil, time.Now().Add(time.Duration(i)*time.Second)))(t)
		c, err := wallet.ParseRefreshResponse(r.status, r.body, issuer, sub)
		if err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		creds = append(creds, c)
	}
	if creds[0].ID == creds[1].ID || creds[0].GenesisIssuedAt != creds[1].GenesisIssuedAt {
		t.Errorf("with -refresh-reissue: ids %d, %d; genesis %d, %d", creds[0].ID, creds[1].ID, creds[0].GenesisIssuedAt, creds[1].GenesisIssuedAt)
	}
}

// refreshRequestFor is hostileEnv.refreshRequest for another wallet.
func (e *hostileEnv) refreshRequestFor(t *testing.T, w *wallet.Wallet, sub string, pcp *wallet.TestPCP) *http.Request {
	t.Helper()
	saved := e.w
	defer func() { e.w = saved }()
	e.w = w
	return e.refreshRequest(t, sub, pcp, time.Now())
}

// junkPCPBody is a 25 MiB PCP-shaped multipart body: a sub, three iris
// shares just under their 8 MiB cap and a hashes.json just under 1 MiB,
// the rest of the PCP missing.
func junkPCPBody(t *testing.T) (body []byte, contentType string, hashesJSON []byte) {
	hashesJSON = bytes.Repeat([]byte{'h'}, 1<<20-1<<10)
	b, ct := multipartBody(t, func(mw *multipart.Writer) error {
		mw.WriteField("sub", "0x51")
		for i := range 3 {
			w, err := mw.CreateFormFile(fmt.Sprintf("iris_code_shares_%d", i), "share")
			if err != nil {
				return err
			}
			w.Write(bytes.Repeat([]byte{'s'}, 8<<20-1<<10))
		}
		w, err := mw.CreateFormFile("hashes.json", "hashes.json")
		if err != nil {
			return err
		}
		_, err = w.Write(hashesJSON)
		return err
	})
	return []byte(b), ct, hashesJSON
}

// postRaw POSTs body over a raw connection and returns the status, or 0;
// the server may answer before it has read the body, so write errors are
// expected.
func postRaw(target, contentType, proof string, body []byte) int {
	u, err := url.Parse(target)
	if err != nil {
		return 0
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return 0
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Minute))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", u.RequestURI(), u.Host, contentType, len(body))
	if proof != "" {
		head += "x-zkp-proof: " + proof + "\r\n"
	}
	go func() {
		if _, err := io.WriteString(conn, head+"\r\n"); err == nil {
			conn.Write(body)
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// procStatusKiB reads a kB field (VmRSS, VmHWM) of /proc/<pid>/status.
func procStatusKiB(t testing.TB, pid int, name string) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name+":" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	t.Fatalf("%s not in /proc/%d/status", name, pid)
	return 0
}
