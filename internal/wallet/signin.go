package wallet

import (
	"context"
	"crypto/rand"
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
	"time"

	"worldid/bridge"
)

// connectPattern finds the wait page's connect URL (signin doc.go "Wallet
// Bridge"): the "Open World App" button's link.
var connectPattern = regexp.MustCompile(`href="(https://(?:staging\.|sandbox\.)?world\.org/verify\?t=wld[^"]*)"`)

// statusPoll is how often SignIn polls the wait page's status as its
// script does; maxWaitRedirects bounds the wait page's redirects to itself
// (the first showing creates the bridge request).
const (
	statusPoll       = 200 * time.Millisecond
	maxWaitRedirects = 3
)

// SignInResult is where the sign-in sent the browser: a redirect Location
// (query and fragment modes) or, for form_post, the page that posts the
// response parameters, with those parameters extracted.
type SignInResult struct {
	Location string     // the 303 target, or "" for form_post
	FormPage string     // the form_post page, or ""
	Params   url.Values // response parameters from the redirect or the form
	// Browser is the browser that finished the sign-in, with its cookies
	// (the provider's login session among them), to continue as it.
	Browser *http.Client
}

// SignIn completes an authorization request playing both sides: the
// browser (it keeps the binding cookie, follows the wait page and polls
// its status as the page's script does) and World App (it reads the
// bridge request of the page's connect URL, proves for its app, empty
// action and signal from the given tree, orb or device, and answers
// through the bridge). It reports where the browser goes at the end.
func (w *Wallet) SignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInResult, error) {
	sub, err := w.PrepareSignIn(ctx, authorizeURL, verificationLevel)
	if err != nil {
		return SignInResult{}, err
	}
	return w.Submit(ctx, sub)
}

// SignInSubmission is a proven sign-in, ready to answer through the
// bridge (single use), and the browser waiting for it.
type SignInSubmission struct {
	Request  BridgeRequest
	Response bridge.Response
	browser  *http.Client
	waitURL  string
}

// PrepareSignIn opens the wait page as a browser, reads the bridge request
// as the wallet and makes the proof, without answering.
func (w *Wallet) PrepareSignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInSubmission, error) {
	jar, _ := cookiejar.New(nil) // never fails without options
	browser := &http.Client{Transport: w.HTTP.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	waitURL, page, err := openWaitPage(ctx, browser, authorizeURL)
	if err != nil {
		return SignInSubmission{}, err
	}
	m := connectPattern.FindSubmatch(page)
	if m == nil {
		return SignInSubmission{}, errors.New("wallet: the wait page has no connect URL")
	}
	r, err := w.ReadBridgeRequest(ctx, html.UnescapeString(string(m[1])))
	if err != nil {
		return SignInSubmission{}, err
	}
	resp, err := w.ProveBridgeRequest(ctx, r, verificationLevel)
	if err != nil {
		return SignInSubmission{}, err
	}
	return SignInSubmission{Request: r, Response: resp, browser: browser, waitURL: waitURL}, nil
}

// Approve is World App's side alone: for a scanned or tapped connect URL
// it reads the bridge request, proves and answers through the bridge. The
// browser showing the page then finishes by itself.
func (w *Wallet) Approve(ctx context.Context, connectURL, verificationLevel string) error {
	r, err := w.ReadBridgeRequest(ctx, connectURL)
	if err != nil {
		return err
	}
	_, err = w.AnswerBridgeRequest(ctx, r, verificationLevel, rand.Reader)
	return err
}

// openWaitPage follows /authorize to the wait page, and the wait page's
// redirects to itself, and returns its URL and body.
func openWaitPage(ctx context.Context, browser *http.Client, authorizeURL string) (string, []byte, error) {
	resp, body, err := get(ctx, browser, authorizeURL)
	if err != nil {
		return "", nil, err
	}
	for range maxWaitRedirects {
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "/authorize/wait?") {
			break
		}
		rel, err := url.Parse(loc)
		if err != nil {
			return "", nil, err
		}
		if resp, body, err = get(ctx, browser, resp.Request.URL.ResolveReference(rel).String()); err != nil {
			return "", nil, err
		}
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Request.URL.Path, "/authorize/wait") {
		if loc := resp.Header.Get("Location"); loc != "" {
			return "", nil, fmt.Errorf("wallet: the authorization request was refused: redirected to %s", loc)
		}
		return "", nil, fmt.Errorf("wallet: wait page: %s: %.300s", resp.Status, body)
	}
	return resp.Request.URL.String(), body, nil
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

// Submit answers a prepared sign-in through the bridge as the wallet,
// then polls the wait page's status as the browser until it is done and
// reloads the page, as its script does, and reports where it is sent.
func (w *Wallet) Submit(ctx context.Context, s SignInSubmission) (SignInResult, error) {
	if err := w.SendBridgeAnswer(ctx, s.Request, rand.Reader, s.Response); err != nil {
		return SignInResult{}, err
	}
	if err := waitDone(ctx, s.browser, strings.Replace(s.waitURL, "/authorize/wait?", "/authorize/status?", 1)); err != nil {
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
		return SignInResult{Location: loc, Params: params, Browser: s.browser}, err
	case http.StatusOK:
		if connectPattern.Match(body) {
			return SignInResult{}, errors.New("wallet: the browser is still waiting after the approval")
		}
		return SignInResult{FormPage: string(body), Params: formFields(string(body)), Browser: s.browser}, nil
	default:
		return SignInResult{}, fmt.Errorf("wallet: finish: %s: %.300s", resp.Status, body)
	}
}

// waitState is the wait page's status answer.
type waitState struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// waitDone polls the status URL until the sign-in is done; a refusal, a
// wallet error or an ended sign-in is an error.
func waitDone(ctx context.Context, browser *http.Client, statusURL string) error {
	tick := time.NewTicker(statusPoll)
	defer tick.Stop()
	for {
		resp, body, err := get(ctx, browser, statusURL)
		if err != nil {
			return err
		}
		var st waitState
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &st) != nil {
			return fmt.Errorf("wallet: status: %s: %.300s", resp.Status, body)
		}
		switch st.State {
		case "done":
			return nil
		case "pending", "scanned", "unavailable":
		default:
			return fmt.Errorf("wallet: the sign-in is %s: %s", st.State, st.Message)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
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
