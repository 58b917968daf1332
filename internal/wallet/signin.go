package wallet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
)

// Patterns of the wait page (signin doc.go "Wait page"): the deep link of
// the wallet request and the match code.
var (
	walletLinkPattern = regexp.MustCompile(`<a id="wallet-link"[^>]* href="(worldid://signin\?[^"]*)"`)
	matchCodePattern  = regexp.MustCompile(`<strong id="match-code">([A-Z0-9]+)</strong>`)
)

// SignInResult is where the sign-in sent the browser: a redirect Location
// (query and fragment modes) or, for form_post, the page that posts the
// response parameters, with those parameters extracted.
type SignInResult struct {
	Location  string     // the 303 target, or "" for form_post
	FormPage  string     // the form_post page, or ""
	Params    url.Values // response parameters from the redirect or the form
	MatchCode string     // the code the wait page and the wallet showed
	// Browser is the browser that finished the sign-in, with its cookies
	// (the provider's login session among them), to continue as it.
	Browser *http.Client
}

// SignIn completes an authorization request playing both sides: the
// browser (it keeps the binding cookie and follows the wait page) and
// World App (it reads the request from the page's link, proves for the
// app with the request's signal and empty action from the given tree, orb
// or device, and submits). It reports where the browser goes at the end.
func (w *Wallet) SignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInResult, error) {
	sub, err := w.PrepareSignIn(ctx, authorizeURL, verificationLevel)
	if err != nil {
		return SignInResult{}, err
	}
	return w.Submit(ctx, sub)
}

// SignInSubmission is a proven sign-in, ready to post to the request's
// submission endpoint (single use), and the browser waiting for it.
type SignInSubmission struct {
	URL       string
	Form      url.Values
	MatchCode string // shown by both the wait page and the wallet
	browser   *http.Client
	waitURL   string
}

// PrepareSignIn opens the wait page as a browser, reads the request as the
// wallet and makes the proof, without submitting it.
func (w *Wallet) PrepareSignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInSubmission, error) {
	jar, _ := cookiejar.New(nil) // never fails without options
	browser := &http.Client{Transport: w.HTTP.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	waitURL, page, err := openWaitPage(ctx, browser, authorizeURL)
	if err != nil {
		return SignInSubmission{}, err
	}
	m := walletLinkPattern.FindSubmatch(page)
	code := matchCodePattern.FindSubmatch(page)
	if m == nil || code == nil {
		return SignInSubmission{}, errors.New("wallet: the wait page has no wallet link or match code")
	}
	sub, err := w.prepareApproval(ctx, html.UnescapeString(string(m[1])), verificationLevel)
	if err != nil {
		return SignInSubmission{}, err
	}
	if sub.MatchCode != string(code[1]) {
		return SignInSubmission{}, fmt.Errorf("wallet: match code %s differs from the page's %s", sub.MatchCode, code[1])
	}
	sub.browser, sub.waitURL = browser, waitURL
	return sub, nil
}

// Approve is World App's side alone: for a scanned or tapped wallet link
// (worldid://signin?request=…&server=…) it fetches the request's details,
// proves and submits. The browser showing the link then finishes by
// itself. It returns the match code the user compares with the page's.
func (w *Wallet) Approve(ctx context.Context, link, verificationLevel string) (string, error) {
	sub, err := w.prepareApproval(ctx, link, verificationLevel)
	if err != nil {
		return "", err
	}
	return sub.MatchCode, w.postApproval(ctx, sub)
}

// ApproveTampered is Approve with a proof for another signal: a real
// proof that does not verify for this request, which the server must
// refuse (the developer simulator's "invalid proof").
func (w *Wallet) ApproveTampered(ctx context.Context, link, verificationLevel string) (string, error) {
	sub, err := w.prepareApprovalFor(ctx, link, verificationLevel, "not the request's signal")
	if err != nil {
		return "", err
	}
	return sub.MatchCode, w.postApproval(ctx, sub)
}

// prepareApproval reads the request of a wallet link and proves for it.
func (w *Wallet) prepareApproval(ctx context.Context, rawLink, verificationLevel string) (SignInSubmission, error) {
	return w.prepareApprovalFor(ctx, rawLink, verificationLevel, "")
}

// prepareApprovalFor proves for the request's signal, or for signal when
// it is not empty.
func (w *Wallet) prepareApprovalFor(ctx context.Context, rawLink, verificationLevel, signal string) (SignInSubmission, error) {
	link, err := url.Parse(rawLink)
	if err != nil || link.Scheme != "worldid" || link.Host != "signin" {
		return SignInSubmission{}, fmt.Errorf("wallet: %q is not a worldid://signin link", rawLink)
	}
	details, err := w.requestDetails(ctx, link.Query())
	if err != nil {
		return SignInSubmission{}, err
	}
	// The signal has no 0x prefix, so SDK hashing is its UTF-8 bytes, as
	// the server expects.
	if signal == "" {
		signal = details.Signal
	}
	item, err := w.Prove(ctx, ProofRequest{AppID: details.AppID, Action: details.Action, Signal: signal,
		Identifier: verificationLevel, Environment: details.Environment})
	if err != nil {
		return SignInSubmission{}, err
	}
	return SignInSubmission{URL: details.Submit, MatchCode: details.MatchCode, Form: url.Values{
		"request":            {details.Request},
		"proof":              {item.Proof},
		"merkle_root":        {item.MerkleRoot},
		"nullifier_hash":     {item.Nullifier},
		"verification_level": {item.Identifier},
	}}, nil
}

// openWaitPage follows /authorize to the wait page and returns its URL and
// body.
func openWaitPage(ctx context.Context, browser *http.Client, authorizeURL string) (string, []byte, error) {
	resp, body, err := get(ctx, browser, authorizeURL)
	if err != nil {
		return "", nil, err
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/authorize/wait?") {
		if loc != "" {
			return "", nil, fmt.Errorf("wallet: the authorization request was refused: redirected to %s", loc)
		}
		return "", nil, fmt.Errorf("wallet: authorize: %s: %.300s", resp.Status, body)
	}
	rel, err := url.Parse(loc)
	if err != nil {
		return "", nil, err
	}
	waitURL := resp.Request.URL.ResolveReference(rel).String()
	resp, body, err = get(ctx, browser, waitURL)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("wallet: wait page: %s: %.300s", resp.Status, body)
	}
	return waitURL, body, nil
}

// requestDetails is the wallet's GET of the request (signin doc.go "Wallet
// protocol").
type requestDetails struct {
	Request, Submit, Signal, Action string
	AppID                           string `json:"app_id"`
	MatchCode                       string `json:"match_code"`
	Environment                     string `json:"environment"` // "staging" for a staging app
}

func (w *Wallet) requestDetails(ctx context.Context, link url.Values) (requestDetails, error) {
	var d requestDetails
	resp, body, err := get(ctx, w.HTTP, link.Get("server")+"/authorize/request?"+url.Values{"request": {link.Get("request")}}.Encode())
	if err != nil {
		return d, err
	}
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("wallet: request details: %s: %.300s", resp.Status, body)
	}
	return d, json.Unmarshal(body, &d)
}

func get(ctx context.Context, c *http.Client, target string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, body, err
}

// postApproval submits the wallet's proof: the server answers JSON.
func (w *Wallet) postApproval(ctx context.Context, s SignInSubmission) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(s.Form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := w.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("wallet: submission: %s: %.300s", resp.Status, body)
	}
	return nil
}

// Submit posts a prepared sign-in as the wallet, then reloads the wait
// page as the browser and reports where it is sent.
func (w *Wallet) Submit(ctx context.Context, s SignInSubmission) (SignInResult, error) {
	if err := w.postApproval(ctx, s); err != nil {
		return SignInResult{}, err
	}
	resp, body, err := get(ctx, s.browser, s.waitURL)
	if err != nil {
		return SignInResult{}, err
	}
	switch resp.StatusCode {
	case http.StatusSeeOther, http.StatusFound:
		loc := resp.Header.Get("Location")
		u, err := url.Parse(loc)
		if err != nil {
			return SignInResult{}, err
		}
		params := u.Query()
		if u.Fragment != "" {
			params, err = url.ParseQuery(u.Fragment)
		}
		return SignInResult{Location: loc, Params: params, MatchCode: s.MatchCode, Browser: s.browser}, err
	case http.StatusOK:
		if matchCodePattern.Match(body) {
			return SignInResult{}, errors.New("wallet: the browser is still waiting after the approval")
		}
		return SignInResult{FormPage: string(body), Params: formFields(string(body)), MatchCode: s.MatchCode, Browser: s.browser}, nil
	default:
		return SignInResult{}, fmt.Errorf("wallet: finish: %s: %.300s", resp.Status, body)
	}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// formFields extracts the hidden inputs of a form_post page.
func formFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}
