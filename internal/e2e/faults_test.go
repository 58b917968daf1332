package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"worldid/admin"
	"worldid/babyjub"
	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/field"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/record"
	"worldid/semaphore"
	"worldid/store"
	"worldid/store/postgres/pgtest"
)

// Faults against the real binary: SIGKILL under concurrent write load, a
// full disk and a read-only data directory.

// faultRounds is how many times TestFaultKillUnderLoad kills the server.
const faultRounds = 4

// faultLimit is max_verifications of the action the load exhausts.
const faultLimit = 40

// faultRound is the single-use work prepared for one round: proofs cannot
// be made fast enough while the server is under load.
type faultRound struct {
	fresh    string         // a verify request for an action of its own
	browser  pendingBrowser // a browser waiting for a sign-in
	signin   signinAnswer   // the wallet's answer to its request
	identity semaphore.Identity
	idComm   string           // identity's commitment, enrolled, never refreshed
	refresh  [2]*http.Request // refreshes of idComm for two different subs
}

// pinState is what the test knows about one identity's sub pin.
type pinState struct {
	subs  [2]string // the canonical subs the two refreshes ask for
	acked string    // the sub of an acknowledged refresh, or ""
	creds []uint64  // ids of acknowledged credentials
}

// faultLoad drives the load and keeps the ledger of acknowledged writes.
type faultLoad struct {
	ctx    context.Context
	p      *serverProc
	dir    string
	app    admin.CreatedApp
	w      *wallet.Wallet
	issuer *babyjub.PublicKey
	rounds []faultRound
	last   *http.Request // a refresh of round 0's identity for a third sub
	limit  string        // a verify request for the action limited to faultLimit

	mu           sync.Mutex
	verified     map[string]string // verify request → created_at of its nullifier
	someVerified chan struct{}     // closed when verified gets its first entry
	limitAcked   int               // acknowledged verifications of the limited action
	codes        map[string]bool   // acknowledged code → redemption acknowledged
	leaves       map[string]int    // acknowledged identity commitment → leaf index
	pins         map[string]*pinState
	unanswered   []signinWork // sign-ins whose answer was lost
	lostFresh    []string     // fresh verifications whose answer was lost
	retried      int          // how many of both were retried
}

// TestFaultKillUnderLoad SIGKILLs the server repeatedly while verifications,
// sign-ins, refreshes and identity inserts run concurrently, restarts it,
// and proves that every acknowledged write survived and that no write the
// client did not see acknowledged is visible in part: nullifiers answer
// reuse with their original created_at and never exceed max_verifications,
// redeemed codes stay redeemed, refreshes keep their sub pinned and their
// log consistent with the pin, leaves keep their index, and a sign-in
// whose answer was lost never yields two grants.
func TestFaultKillUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the binary under load")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := hardenedDataDir(t)
	// The load refreshes far faster than the per-idComm limit allows.
	args := []string{"-refresh-rate-limits=false"}
	f := newFaultLoad(t, ctx, startProc(t, dir, args...), dir)
	for round := range faultRounds {
		if round > 0 {
			f.p = startProc(t, dir, args...)
			f.checkAcknowledged(t)
		}
		f.loadAndKill(t, round)
		f.checkStoreCopy(t)
	}
	f.p = startProc(t, dir, args...)
	f.checkAcknowledged(t)
	f.checkPinOverHTTP(t)
	t.Logf("acknowledged across %d kills: %d/%d fresh nullifiers, %d/%d limited verifications, %d/%d codes, %d leaves, %d/%d pins; %d lost answers retried",
		faultRounds, len(f.verified), faultRounds, f.limitAcked, faultLimit, len(f.codes), faultRounds, len(f.leaves), f.ackedPins(), faultRounds, f.retried)
}

func newFaultLoad(t *testing.T, ctx context.Context, p *serverProc, dir string) *faultLoad {
	f := &faultLoad{ctx: ctx, p: p, dir: dir, verified: map[string]string{}, someVerified: make(chan struct{}), codes: map[string]bool{}, leaves: map[string]int{}, pins: map[string]*pinState{}}
	var err error
	if f.app, err = p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "fault RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	f.w = keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	if f.issuer, err = wallet.FetchIssuerKey(ctx, hardenedClient, p.public); err != nil {
		t.Fatal(err)
	}
	if _, err := p.adminClient.SetActionLimit(ctx, admin.ActionLimitRequest{RPID: f.app.RPID, Action: "fault-limited", MaxVerifications: faultLimit}); err != nil {
		t.Fatal(err)
	}
	f.limit = f.verifyRequest(t, "fault-limited")
	for r := range faultRounds {
		f.rounds = append(f.rounds, f.prepareRound(t, r))
	}
	f.last = f.refreshRequest(t, f.rounds[0].identity, "0xc0ffee")
	return f
}

func (f *faultLoad) verifyRequest(t *testing.T, action string) string {
	t.Helper()
	item, err := f.w.Prove(f.ctx, wallet.ProofRequest{AppID: f.app.AppID, Action: action, Signal: "fault"})
	if err != nil {
		t.Fatal(err)
	}
	return verifyRequest(action, itemJSON(t, item, nil))
}

func (f *faultLoad) prepareRound(t *testing.T, r int) faultRound {
	t.Helper()
	round := faultRound{fresh: f.verifyRequest(t, fmt.Sprintf("fault-%d", r))}
	v := url.Values{"response_type": {"code"}, "client_id": {f.app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}, "state": {"st"}}
	round.browser = pendingSignin(t, f.p.public+"/authorize?"+v.Encode())
	req := round.browser.read(t, f.ctx, f.w)
	resp, err := f.w.ProveBridgeRequest(f.ctx, req, "orb")
	if err != nil {
		t.Fatal(err)
	}
	round.signin = signinAnswer{req, resp}

	id, err := semaphore.NewIdentity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	round.idComm, round.identity = field.Format(&c), id
	signup := record.Signup{IDCommitment: round.idComm, SignupID: fmt.Sprintf("fault-%d", r), VerifiedAt: time.Unix(1_700_000_000, 0).UTC()}
	if err := f.p.adminClient.ImportSignups(f.ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
		t.Fatal(err)
	}
	pin := &pinState{}
	for i, sub := range []string{fmt.Sprintf("0x%x", 2*r+1), fmt.Sprintf("0x%x", 2*r+2)} {
		round.refresh[i] = f.refreshRequest(t, id, sub)
		pin.subs[i] = canonicalSub(t, sub)
	}
	f.pins[round.idComm] = pin
	return round
}

func canonicalSub(t *testing.T, sub string) string {
	t.Helper()
	x, err := field.ParsePrefixedHex(sub)
	if err != nil {
		t.Fatal(err)
	}
	return field.Format(&x)
}

// refreshRequest proves a refresh of id for sub. Every restart moves the
// server to a new port, so sendRefresh points the request at the current one.
func (f *faultLoad) refreshRequest(t *testing.T, id semaphore.Identity, sub string) *http.Request {
	t.Helper()
	pk, err := f.w.ProvingKey(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, err := wallet.NewRefreshHTTPRequest(context.Background(), &wallet.RefreshRequest{IssuerURL: "http://worldid.invalid", Identity: id, ProvingKey: pk, Sub: sub, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// loadAndKill runs the round's single-use work and continuous writes, then
// SIGKILLs the server: in round 0 once the single-use work is answered and
// every continuous writer has since finished a request, so that every kind
// of write is acknowledged at least once; later after a random number of
// continuous requests, soon enough that the single-use work is often still
// in flight.
func (f *faultLoad) loadAndKill(t *testing.T, r int) {
	ctx, stop := context.WithCancel(f.ctx)
	defer stop()
	var once, load sync.WaitGroup
	round := f.rounds[r]
	once.Go(func() { f.postFresh(t, ctx, round.fresh) })
	once.Go(func() { f.submitSignin(t, ctx, signinWork{round.browser, round.signin}) })
	for _, req := range round.refresh {
		once.Go(func() { f.sendRefresh(t, ctx, round.idComm, req) })
	}
	ops := []func(*testing.T, context.Context){f.postReuse, f.postReuse, f.postReuse, f.postLimited, f.addLeaf}
	done := make([]atomic.Int64, len(ops)) // requests finished by each writer
	finished := make(chan struct{}, 1)     // some writer finished a request
	for i, op := range ops {
		load.Go(func() {
			for ctx.Err() == nil {
				op(t, ctx)
				done[i].Add(1)
				select {
				case finished <- struct{}{}:
				default:
				}
			}
		})
	}
	// waitFor waits until each writer i has finished atLeast(i) requests.
	waitFor := func(atLeast func(i int) int64) {
		for i := 0; i < len(ops); {
			if done[i].Load() >= atLeast(i) {
				i++
				continue
			}
			select {
			case <-finished:
			case <-ctx.Done():
				return
			}
		}
	}
	if r == 0 {
		once.Wait()
		// The second request each writer finishes from now began after
		// the single-use work was answered.
		began := make([]int64, len(ops))
		for i := range ops {
			began[i] = done[i].Load()
		}
		waitFor(func(i int) int64 { return began[i] + 2 })
	} else {
		n := int64(mathrand.IntN(8))
		waitFor(func(int) int64 { return n })
	}
	if err := f.p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-f.p.exited
	stop()
	once.Wait()
	load.Wait()
}

// post sends a JSON body to the public listener; a nil reply means no
// answer (the server was killed).
func (f *faultLoad) post(ctx context.Context, path, body string) *reply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.p.public+path, strings.NewReader(body))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	r, err := roundTrip(req)
	if err != nil {
		return nil
	}
	return &r
}

type verifyReply struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
}

func (f *faultLoad) verify(ctx context.Context, body string) (*reply, verifyReply) {
	var v verifyReply
	r := f.post(ctx, "/api/v4/verify/"+f.app.RPID, body)
	if r != nil {
		json.Unmarshal(r.body, &v)
	}
	return r, v
}

// postFresh verifies a new nullifier. A lost answer is retried after the
// restart, where the nullifier is either recorded (reuse) or not (first
// use): both verify.
func (f *faultLoad) postFresh(t *testing.T, ctx context.Context, body string) {
	r, v := f.verify(ctx, body)
	switch {
	case r == nil:
		f.mu.Lock()
		f.lostFresh = append(f.lostFresh, body)
		f.mu.Unlock()
	case r.status == http.StatusOK:
		f.mu.Lock()
		if len(f.verified) == 0 {
			close(f.someVerified)
		}
		f.verified[body] = v.CreatedAt
		f.mu.Unlock()
	default:
		t.Errorf("fresh verification: %d %s", r.status, r.body)
	}
}

// postReuse re-sends an acknowledged verification: its nullifier must be
// known, with the created_at of its first acknowledgement.
func (f *faultLoad) postReuse(t *testing.T, ctx context.Context) {
	body, created := f.anyVerified()
	if body == "" {
		select {
		case <-f.someVerified:
		case <-ctx.Done():
		}
		return
	}
	r, v := f.verify(ctx, body)
	if r != nil && (r.status != http.StatusOK || v.CreatedAt != created || !strings.HasSuffix(v.Message, "(nullifier reuse)")) {
		t.Errorf("acknowledged nullifier: %d %s, want reuse created at %s", r.status, r.body, created)
	}
}

func (f *faultLoad) anyVerified() (body, created string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for body, created = range f.verified {
		return body, created
	}
	return "", ""
}

// postLimited spends the limited action: acknowledged verifications never
// exceed the limit, and once the limit is acknowledged it holds.
func (f *faultLoad) postLimited(t *testing.T, ctx context.Context) {
	r, v := f.verify(ctx, f.limit)
	switch {
	case r == nil:
	case r.status == http.StatusOK:
		f.mu.Lock()
		f.limitAcked++
		if f.limitAcked > faultLimit {
			t.Errorf("verification %d of an action limited to %d was accepted", f.limitAcked, faultLimit)
		}
		f.mu.Unlock()
	case r.status == http.StatusBadRequest && v.Code == "max_verifications_reached":
	default:
		t.Errorf("limited action: %d %s", r.status, r.body)
	}
}

func (f *faultLoad) addLeaf(t *testing.T, ctx context.Context) {
	commitment := randomFE()
	body := `{"identifier":"device","environment":"staging","identity_commitment":"` + commitment + `"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.p.adm+"/admin/identities", strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.p.adminClient.Token)
	r, err := roundTrip(req)
	switch {
	case err != nil:
	case r.status == http.StatusCreated:
		var added admin.AddedIdentity
		json.Unmarshal(r.body, &added)
		f.mu.Lock()
		f.leaves[commitment] = added.Index
		f.mu.Unlock()
	default:
		t.Errorf("identity insert: %d %s", r.status, r.body)
	}
}

// signinAnswer is the wallet's proven answer and the bridge request it
// was read from.
type signinAnswer struct {
	req  wallet.BridgeRequest
	resp bridge.Response
}

// signinWork is a sign-in's two sides: the waiting browser and the
// wallet's answer.
type signinWork struct {
	browser pendingBrowser
	answer  signinAnswer
}

// submitSignin answers a pending request through the bridge as the
// wallet, then waits for the page's status to say done, finishes it as the
// browser and redeems the code. A lost step is retried after the restart:
// the page then shows a fresh bridge request if the restarted relay forgot
// its own (the answer was never fetched, or fetched and not yet checked),
// and the wallet sends the same proof to it (it proves for the sign-in's
// signal, which does not change); an approval a lost attempt recorded
// finishes at once.
func (f *faultLoad) submitSignin(t *testing.T, ctx context.Context, w signinWork) {
	lost := func() {
		f.mu.Lock()
		f.unanswered = append(f.unanswered, w)
		f.mu.Unlock()
	}
	// Every restart moves the server to a new port.
	waitURL, err := url.Parse(w.browser.waitURL)
	if err != nil {
		t.Fatal(err)
	}
	w.browser.waitURL = f.p.public + waitURL.RequestURI()
	r, err := w.browser.load()
	if err == nil && r.status == http.StatusOK {
		r, err = f.answerSignin(t, ctx, &w, r)
	}
	switch code := codeOf(r); {
	case err != nil:
		lost()
	case code != "":
		f.mu.Lock()
		f.codes[code] = false
		f.mu.Unlock()
		f.redeem(t, ctx, code)
	case r.status == http.StatusBadRequest && r.errorCode() == "already_completed":
		// A retried finish whose code a lost attempt received.
	default:
		t.Errorf("sign-in finish: %d %s %.300s", r.status, r.header.Get("Location"), r.body)
	}
}

// answerSignin sends the wallet's answer to the bridge request the wait
// page r shows (reading it first if it is a fresh one), then waits for
// done and finishes. Errors are lost steps, to retry.
func (f *faultLoad) answerSignin(t *testing.T, ctx context.Context, w *signinWork, page reply) (reply, error) {
	m := walletLinkRE.FindSubmatch(page.body)
	if m == nil {
		return reply{}, fmt.Errorf("wait page without a connect URL: %.300s", page.body)
	}
	w.browser.connect = html.UnescapeString(string(m[1]))
	conn, err := bridge.ParseConnect(w.browser.connect)
	if err != nil {
		t.Fatal(err)
	}
	if conn.RequestID != w.answer.req.Connect.RequestID {
		if w.answer.req, err = f.w.ReadBridgeRequest(ctx, w.browser.connect); err != nil {
			return reply{}, err
		}
	}
	err = f.w.SendBridgeAnswer(ctx, w.answer.req, rand.Reader, w.answer.resp)
	var status *client.StatusError
	if err != nil && !(errors.As(err, &status) && (status.Status == http.StatusConflict || status.Status == http.StatusBadRequest)) {
		return reply{}, err // a 409 or 400: a lost attempt's answer is there or was taken
	}
	state, err := w.browser.awaitState()
	switch {
	case err != nil:
		return reply{}, err
	case state != "done":
		t.Errorf("a sign-in under faults is %s", state)
	}
	return w.browser.finish()
}

// redeem exchanges a code. A code whose redemption was acknowledged must
// never redeem again; one whose redemption was lost may or may not have
// been redeemed, and is redeemed (or burnt) by this attempt.
func (f *faultLoad) redeem(t *testing.T, ctx context.Context, code string) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e2eRedirect}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.p.public+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(f.app.AppID, f.app.ClientSecret)
	r, err := roundTrip(req)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	redeemed := f.codes[code]
	switch {
	case r.status == http.StatusOK && !redeemed:
	case r.status == http.StatusBadRequest && r.errorCode() == "invalid_grant":
	default:
		t.Errorf("redeeming a code (redemption acknowledged before: %v): %d %s", redeemed, r.status, r.body)
	}
	f.codes[code] = true
}

func (f *faultLoad) sendRefresh(t *testing.T, ctx context.Context, idComm string, req *http.Request) {
	body, err := req.GetBody()
	if err != nil {
		t.Error(err)
		return
	}
	out := req.Clone(ctx)
	out.Body = body
	out.URL, _ = url.Parse(f.p.public + req.URL.RequestURI())
	out.Host = ""
	r, err := roundTrip(out)
	if err != nil {
		return
	}
	sub, _ := field.ParsePrefixedHex(subOf(req))
	cred, err := wallet.ParseRefreshResponse(r.status, r.body, f.issuer, sub)
	var refused *wallet.RefreshError
	switch {
	case err == nil:
		f.mu.Lock()
		pin := f.pins[idComm]
		if pin.acked != "" && pin.acked != field.Format(&sub) {
			t.Errorf("refreshes for two subs were acknowledged for %s", idComm)
		}
		pin.acked, pin.creds = field.Format(&sub), append(pin.creds, cred.ID)
		f.mu.Unlock()
	case errors.As(err, &refused) && refused.Code == "SUB_MISMATCH":
	default:
		t.Errorf("refresh: %v", err)
	}
}

// subOf reads the sub form field of a prepared refresh request.
func subOf(req *http.Request) string {
	body, _ := req.GetBody()
	r := req.Clone(context.Background())
	r.Body = body
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		return ""
	}
	return r.FormValue("sub")
}

// checkAcknowledged runs after a restart: every acknowledged write is
// there, and lost sign-in answers never give a second grant.
func (f *faultLoad) checkAcknowledged(t *testing.T) {
	t.Helper()
	ctx := f.ctx
	for body, created := range f.verified {
		if r, v := f.verify(ctx, body); r == nil || r.status != http.StatusOK || v.CreatedAt != created {
			t.Errorf("acknowledged nullifier after restart: %+v, want created_at %s", v, created)
		}
	}
	if f.limitAcked == faultLimit {
		if r, v := f.verify(ctx, f.limit); r == nil || v.Code != "max_verifications_reached" {
			t.Errorf("the limit reached before the kill no longer holds: %+v", v)
		}
	}
	for code := range f.codes {
		f.redeem(t, ctx, code)
	}
	for commitment, index := range f.leaves {
		r := f.post(ctx, "/api/v1/inclusion-proof", `{"identifier":"device","environment":"staging","identity_commitment":"`+commitment+`"}`)
		var ip struct{ Index int }
		if r == nil || r.status != http.StatusOK || json.Unmarshal(r.body, &ip) != nil || ip.Index != index {
			t.Errorf("acknowledged leaf %d after restart: %v", index, r)
		}
	}
	signins, fresh := f.unanswered, f.lostFresh
	f.unanswered, f.lostFresh, f.retried = nil, nil, f.retried+len(signins)+len(fresh)
	for _, w := range signins {
		f.submitSignin(t, ctx, w)
	}
	for _, body := range fresh {
		f.postFresh(t, ctx, body)
	}
}

// checkStoreCopy opens a copy of the killed server's files with package
// store: recovery must succeed, each acknowledged refresh's sub must be
// pinned, an unacknowledged race may have pinned either sub or none, and
// the refresh log must agree with the pin.
func (f *faultLoad) checkStoreCopy(t *testing.T) {
	t.Helper()
	copyDir := t.TempDir()
	for _, name := range []string{"state.json", "journal.jsonl"} {
		b, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(copyDir, store.Options{})
	if err != nil {
		t.Fatalf("the killed server's store does not recover: %v", err)
	}
	defer db.Close()
	for idComm, pin := range f.pins {
		pinned, err := db.PinnedSub(f.ctx, idComm)
		switch {
		case errors.Is(err, record.ErrNotFound) && pin.acked == "":
		case err != nil:
			t.Errorf("pin of %s: %v", idComm, err)
		case pin.acked != "" && pinned != pin.acked:
			t.Errorf("acknowledged pin %s of %s became %s", pin.acked, idComm, pinned)
		case pinned != pin.subs[0] && pinned != pin.subs[1]:
			t.Errorf("%s pinned to %s, which no refresh asked for", idComm, pinned)
		}
		logged, err := db.Refreshes(f.ctx, idComm)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[uint64]bool{}
		for _, rec := range logged {
			ids[rec.CredentialID] = true
			if rec.Sub != pinned {
				t.Errorf("refresh log of %s has sub %s, pin %s", idComm, rec.Sub, pinned)
			}
		}
		for _, id := range pin.creds {
			if !ids[id] {
				t.Errorf("acknowledged credential %d of %s is not in the refresh log", id, idComm)
			}
		}
	}
}

// checkPinOverHTTP: round 0's refresh was acknowledged, so after all the
// kills a refresh for another sub is SUB_MISMATCH.
func (f *faultLoad) checkPinOverHTTP(t *testing.T) {
	t.Helper()
	idComm := f.rounds[0].idComm
	if f.pins[idComm].acked == "" {
		t.Fatal("round 0 acknowledged no refresh")
	}
	out := f.last.Clone(f.ctx)
	out.Body, _ = f.last.GetBody()
	out.URL, _ = url.Parse(f.p.public + f.last.URL.RequestURI())
	out.Host = ""
	r := send(t, out)
	if r.status != http.StatusBadRequest || r.errorCode() != "SUB_MISMATCH" {
		t.Errorf("refresh for another sub after the kills: %d %s", r.status, r.body)
	}
}

func (f *faultLoad) ackedPins() int {
	n := 0
	for _, pin := range f.pins {
		if pin.acked != "" {
			n++
		}
	}
	return n
}

// ---- Full disk and read-only data dir ----

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory, or skips
// the test where mounting is not allowed.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs for a real ENOSPC (%v): this test needs root or CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes a file in dir until the file system is full.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// serveFails runs `worldid serve` on dataDir, expecting it to refuse to
// start; it returns the output.
func serveFails(t *testing.T, ctx context.Context, dataDir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, worldidBinary(t), "serve", "-data", dataDir, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve on %s: %v, want exit status 1\n%s", dataDir, err, out)
	}
	return string(out)
}

func readFiles(t *testing.T, dir string, names ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func sameFiles(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed", name)
		}
	}
}

// TestFaultDiskFull fills the data dir's file system (a small tmpfs, so the
// ENOSPC is real) under a running server: writes fail with 503 and a log
// line naming the cause, reads keep working, /healthz answers 503 with the
// cause and worldid_store_healthy is 0; once space is freed the server
// repairs its store by itself and writes succeed again. Filled again, a
// restart on the full disk refuses to start without touching the files,
// and once space is free every acknowledged write is there.
func TestFaultDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mnt := mountTmpfs(t, 1<<20)
	dataDir := filepath.Join(mnt, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	linkSharedKey(t, dataDir)
	p := startProc(t, dataDir)
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "disk RP", RedirectURIs: []string{e2eRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	target := p.public + "/api/v4/verify/" + app.RPID
	prove := func(action string) string {
		item, err := w.Prove(ctx, wallet.ProofRequest{AppID: app.AppID, Action: action, Signal: "disk"})
		if err != nil {
			t.Fatal(err)
		}
		return verifyRequest(action, itemJSON(t, item, nil))
	}
	acked, fresh, later := prove("disk-acked"), prove("disk-fresh"), prove("disk-later")
	first := call(http.MethodPost, target, "application/json", acked)(t)
	var firstAnswer verifyReply
	if first.status != http.StatusOK || json.Unmarshal(first.body, &firstAnswer) != nil {
		t.Fatalf("verification before the disk fills: %d %s", first.status, first.body)
	}

	fillDisk(t, mnt)
	leaves := map[string]int{}
	insertUntilRefused(t, ctx, p, leaves)
	authorize := p.public + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}}.Encode()
	t.Run("writes answer 503", func(t *testing.T) {
		// An authorization request, its wait page's bridge request and
		// the wallet's read of it write nothing to the store (the built-in
		// relay of a JSON store is memory), so they still work.
		pending := pendingSignin(t, authorize)
		conn, err := bridge.ParseConnect(pending.connect)
		if err != nil {
			t.Fatal(err)
		}
		details := conn.BridgeURL() + "/request/" + conn.RequestID
		runHostile(t, dataDir, []hostileCase{
			{name: "verify", send: call(http.MethodPost, target, "application/json", fresh), status: 503, code: "service_unavailable"},
			{name: "verify reuse", send: call(http.MethodPost, target, "application/json", acked), status: 503, code: "service_unavailable"},
			{name: "authorize", send: call(http.MethodGet, authorize, "", ""), status: 303, code: ""},
			{name: "wallet reads the request", send: call(http.MethodGet, details, "", ""), status: 200, code: ""},
			{name: "admin", send: call(http.MethodPost, p.adm+"/admin/apps", "application/json", `{"name":"x","redirect_uris":["https://a.example/cb"]}`,
				"Authorization", "Bearer "+p.adminClient.Token), status: 503, code: "unavailable"},
		})
	})
	t.Run("reads keep working", func(t *testing.T) {
		for _, path := range []string{"/jwks", "/.well-known/openid-configuration"} {
			if r := call(http.MethodGet, p.public+path, "", "")(t); r.status != http.StatusOK {
				t.Errorf("GET %s: %d", path, r.status)
			}
		}
		if apps, err := p.adminClient.Apps(ctx); err != nil || len(apps.Apps) != 2 {
			t.Errorf("app list: %v %+v", err, apps)
		}
	})
	t.Run("health shows it", func(t *testing.T) {
		if r := waitHealthz(t, p, http.StatusServiceUnavailable, 0); !strings.Contains(string(r.body), "no space left on device") {
			t.Errorf("/healthz on a full disk: %d %s", r.status, r.body)
		}
		waitMetric(t, p, "worldid_store_healthy", "0")
		if v := metricValue(t, p, "worldid_store_health_failures_total"); v == "0" || v == "" {
			t.Errorf("worldid_store_health_failures_total on a full disk: %q", v)
		}
	})

	// Space freed: the store repairs itself, without a restart.
	if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
		t.Fatal(err)
	}
	waitHealthz(t, p, http.StatusOK, 30*time.Second)
	if r := call(http.MethodPost, target, "application/json", fresh)(t); r.status != http.StatusOK {
		t.Errorf("a write after the disk was freed: %d %s", r.status, r.body)
	}
	waitMetric(t, p, "worldid_store_healthy", "1")

	fillDisk(t, mnt)
	insertUntilRefused(t, ctx, p, leaves)
	p.stop(t) // a clean shutdown despite the failed store
	for _, want := range []string{"no space left on device", "storage unavailable", "writes enabled again"} {
		if log := p.stderr.String(); !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}

	files := readFiles(t, dataDir, "state.json", "journal.jsonl")
	if out := serveFails(t, ctx, dataDir); !strings.Contains(out, "no space left on device") {
		t.Errorf("start on a full disk does not say why it failed:\n%s", out)
	}
	sameFiles(t, files, readFiles(t, dataDir, "state.json", "journal.jsonl"))

	if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
		t.Fatal(err)
	}
	p = startProc(t, dataDir)
	if a := postVerify(t, ctx, p, app.RPID, []byte(acked)); a.status != http.StatusOK || a.CreatedAt != firstAnswer.CreatedAt {
		t.Errorf("acknowledged nullifier after the disk was freed: %+v", a)
	}
	for c, index := range leaves {
		r := call(http.MethodPost, p.public+"/api/v1/inclusion-proof", "application/json", `{"identifier":"device","identity_commitment":"`+c+`"}`)(t)
		var ip struct{ Index int }
		if r.status != http.StatusOK || json.Unmarshal(r.body, &ip) != nil || ip.Index != index {
			t.Errorf("acknowledged leaf %d: %d %s", index, r.status, r.body)
		}
	}
	if a := postVerify(t, ctx, p, app.RPID, []byte(fresh)); a.status != http.StatusOK || !strings.HasSuffix(a.Message, "(nullifier reuse)") {
		t.Errorf("the nullifier acknowledged after the repair: %+v", a)
	}
	if a := postVerify(t, ctx, p, app.RPID, []byte(later)); a.status != http.StatusOK {
		t.Errorf("a write after the disk was freed: %+v", a)
	}
}

// insertUntilRefused adds identities, recording the acknowledged ones,
// until the admin API answers 503: the journal's last page may still have
// room after the disk is full.
func insertUntilRefused(t *testing.T, ctx context.Context, p *serverProc, leaves map[string]int) {
	t.Helper()
	for range 1000 {
		c := randomFE()
		added, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: "device", IdentityCommitment: c})
		var refused *admin.Error
		if errors.As(err, &refused) && refused.Status == http.StatusServiceUnavailable {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		leaves[c] = added.Index
	}
	t.Fatal("1000 identities fit on a full disk")
}

// metricValue is the value of an unlabelled series at /metrics.
func metricValue(t *testing.T, p *serverProc, name string) string {
	t.Helper()
	r := call(http.MethodGet, p.public+"/metrics", "", "")(t)
	for _, line := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// waitMetric polls /metrics until the series has the value; the store's
// health is checked every second.
func waitMetric(t *testing.T, p *serverProc, name, want string) {
	t.Helper()
	var v string
	if !eventually(10*time.Second, 100*time.Millisecond, func() bool { v = metricValue(t, p, name); return v == want }) {
		t.Fatalf("%s is %q, want %q", name, v, want)
	}
}

// waitHealthz polls /healthz until it answers status.
func waitHealthz(t *testing.T, p *serverProc, status int, limit time.Duration) reply {
	t.Helper()
	var r reply
	if !eventually(limit, 100*time.Millisecond, func() bool { r = call(http.MethodGet, p.public+"/healthz", "", "")(t); return r.status == status }) {
		t.Fatalf("/healthz still answers %d %s after %v, want %d", r.status, r.body, limit, status)
	}
	return r
}

// TestFaultReadOnlyDataDir starts the server on a read-only bind mount of a
// data dir: it must refuse to start with an error naming the cause and
// leave the files as they were. (A running server's data dir cannot be
// made read-only: the kernel refuses to remount a mount read-only while
// files on it are open for writing, as the journal is.)
func TestFaultReadOnlyDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx := context.Background()
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	if _, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "ro RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	files := readFiles(t, dataDir, "state.json", "journal.jsonl", server.AdminTokenFile, server.IssuerKeyFile)

	ro := t.TempDir()
	if err := syscall.Mount(dataDir, ro, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount the data dir (%v): this test needs root or CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { syscall.Unmount(ro, syscall.MNT_DETACH) })
	if err := syscall.Mount("", ro, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount the bind mount read-only: %v", err)
	}
	if out := serveFails(t, ctx, ro); !strings.Contains(out, "read-only file system") {
		t.Errorf("start on a read-only data dir does not say why it failed:\n%s", out)
	}
	sameFiles(t, files, readFiles(t, dataDir, "state.json", "journal.jsonl", server.AdminTokenFile, server.IssuerKeyFile))

	p = startProc(t, dataDir)
	if apps, err := p.adminClient.Apps(ctx); err != nil || len(apps.Apps) != 2 {
		t.Errorf("apps after the read-only attempt: %v %+v", err, apps)
	}
}

// ---- Never a silent reset, interrupted first start, hung PostgreSQL ----

// TestFaultNoSilentReset deletes the store's files as an operator's mistake
// would: state.json after a clean restart (empty journal), and the journal
// after a kill. The server refuses to start, naming the file and the
// recovery command, and leaves the files alone; -accept-data-loss starts
// it with what is left and logs the loss.
func TestFaultNoSilentReset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx := context.Background()
	dir := hardenedDataDir(t)
	p := startProc(t, dir)
	if _, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "kept RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	startProc(t, dir).stop(t) // a clean restart: everything in state.json, the journal empty
	state := filepath.Join(dir, "state.json")
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	files := readFiles(t, dir, "journal.jsonl", "store.mark")
	out := serveFails(t, ctx, dir)
	for _, want := range []string{state + " is missing", "worldid serve -data " + dir + " -accept-data-loss"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	sameFiles(t, files, readFiles(t, dir, "journal.jsonl", "store.mark"))

	p = startProc(t, dir, "-accept-data-loss")
	if apps, err := p.adminClient.Apps(ctx); err != nil || len(apps.Apps) != 0 {
		t.Errorf("apps after accepting the loss of state.json: %v %+v", err, apps)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "level=WARN") || !strings.Contains(p.stderr.String(), state) {
		t.Errorf("the accepted loss is not logged:\n%s", p.stderr)
	}

	// Killed after an acknowledged write, then the journal goes.
	p = startProc(t, dir)
	if _, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "journal RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	waitMarkCatchesUp(t, dir)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	journal := filepath.Join(dir, "journal.jsonl")
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if out := serveFails(t, ctx, dir); !strings.Contains(out, journal+" is missing") {
		t.Errorf("the refusal does not name the journal:\n%s", out)
	}
}

// waitMarkCatchesUp waits until the store's mark holds the newest
// acknowledged LSN (the mark trails writes by up to a second).
func waitMarkCatchesUp(t *testing.T, dir string) {
	t.Helper()
	want := acknowledgedWrites(t, dir)
	var b []byte
	caughtUp := func() bool {
		var mark struct{ LSN uint64 }
		var err error
		b, err = os.ReadFile(filepath.Join(dir, "store.mark"))
		return err == nil && json.Unmarshal(b, &mark) == nil && mark.LSN >= want
	}
	if !eventually(10*time.Second, 50*time.Millisecond, caughtUp) {
		t.Fatalf("store.mark (%s) did not reach lsn %d", b, want)
	}
}

// TestFaultInterruptedFirstStart kills the first start of a data dir during
// the proving-key setup, after the admin token exists: the next start
// still completes the first start, demo app included, and the one after
// that creates no second demo app.
func TestFaultInterruptedFirstStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the proving-key setup")
	}
	ctx := context.Background()
	dir := t.TempDir()
	cmd := exec.Command(worldidBinary(t), "serve", "-data", dir, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "generating the local Semaphore proving key") {
	}
	cmd.Process.Kill()
	go io.Copy(io.Discard, stderr)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, server.AdminTokenFile)); err != nil {
		t.Fatalf("the interrupted start made no admin token (the test needs one): %v", err)
	}

	p := startProc(t, dir)
	if !slices.ContainsFunc(p.startup, func(l string) bool { return strings.Contains(l, "demo app created") }) {
		t.Errorf("the start after an interrupted first start created no demo app:\n%s", strings.Join(p.startup, "\n"))
	}
	p.stop(t)
	p = startProc(t, dir)
	if slices.ContainsFunc(p.startup, func(l string) bool { return strings.Contains(l, "demo app created") }) {
		t.Errorf("a later start created another demo app")
	}
	if apps, err := p.adminClient.Apps(ctx); err != nil || len(apps.Apps) != 1 {
		t.Errorf("apps: %v %+v, want the demo app", err, apps)
	}
}

// TestFaultPostgresHangs freezes the connection to PostgreSQL (as SIGSTOP
// of the server would: connections stay open, nothing answers) under a
// running server: verification, sign-in, the admin API and /healthz answer
// 503 within a few seconds instead of hanging, and once the database
// answers again so does the server, without a restart.
func TestFaultPostgresHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx := context.Background()
	dsn, gate := pgtest.GatedDSN(t, pgtest.FreshSchema(t))
	p := startProc(t, hardenedDataDir(t), "-store", dsn)
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "hang RP", RedirectURIs: []string{e2eRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	w := keyedWallet(t, ctx, p, [2]string{"orb", "production"})
	item, err := w.Prove(ctx, wallet.ProofRequest{AppID: app.AppID, Action: "hang", Signal: "s"})
	if err != nil {
		t.Fatal(err)
	}
	body := verifyRequest("hang", itemJSON(t, item, nil))
	authorize := p.public + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}}.Encode()
	admin := func(method, path, body string) func(*testing.T) reply {
		return call(method, p.adm+path, "application/json", body, "Authorization", "Bearer "+p.adminClient.Token)
	}
	requests := map[string]func(*testing.T) reply{
		"verify":     call(http.MethodPost, p.public+"/api/v4/verify/"+app.RPID, "application/json", body),
		"authorize":  call(http.MethodGet, authorize, "", ""),
		"admin":      admin(http.MethodGet, "/admin/apps", ""),
		"healthz":    call(http.MethodGet, p.public+"/healthz", "", ""),
		"identities": admin(http.MethodPost, "/admin/identities", `{"identity_commitments":["0x2a","0x2b"]}`),
		"signups":    admin(http.MethodPost, "/admin/signups", `{"signups":[{"id_commitment":"0x2a","signup_id":"s","verified_at":"2024-01-01T00:00:00Z"}]}`),
	}
	// The bound: the store's 5 s call deadline, and slack for a loaded
	// machine. Adding identities reads the tree's new leaves, then appends,
	// and may first wait for the follower's catch-up of the same tree: two
	// deadlines (store/postgres/doc.go). Every bound is below the 30 s
	// write timeout, after which a client would get nothing.
	bounds := map[string]time.Duration{"identities": 15 * time.Second}
	gate.Freeze()
	var wg sync.WaitGroup
	for name, send := range requests {
		bound := cmp.Or(bounds[name], 10*time.Second)
		wg.Go(func() {
			t.Run(name, func(t *testing.T) {
				start := time.Now()
				r := send(t)
				if took := time.Since(start); r.status != http.StatusServiceUnavailable || took > bound {
					t.Errorf("%d %.200s after %v, want 503 within %v", r.status, r.body, took, bound)
				}
			})
		})
	}
	wg.Wait()
	waitMetric(t, p, "worldid_store_healthy", "0")
	gate.Thaw()
	waitHealthz(t, p, http.StatusOK, 30*time.Second)
	if r := requests["verify"](t); r.status != http.StatusOK {
		t.Errorf("verify once the database answers again: %d %s", r.status, r.body)
	}
}
