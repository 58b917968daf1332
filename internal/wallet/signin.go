package wallet

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// walletLinkPattern finds the sign-in page's deep link (oidc doc.go,
// "Wallet protocol").
var walletLinkPattern = regexp.MustCompile(`<a id="wallet-link" href="(worldid://signin\?[^"]*)"`)

// SignInResult is where the sign-in sent the user agent: a redirect
// Location (query and fragment modes) or, for form_post, the page that
// posts the response parameters, with those parameters extracted.
type SignInResult struct {
	Location string     // the 303 target, or "" for form_post
	FormPage string     // the form_post page, or ""
	Params   url.Values // response parameters from the redirect or the form
}

// SignIn completes an authorization request as World App would: it opens
// the sign-in page at authorizeURL, proves for the app with the page's
// signal and empty action from the given tree (orb or device), submits,
// and reports where the browser would go next.
func (w *Wallet) SignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInResult, error) {
	sub, err := w.PrepareSignIn(ctx, authorizeURL, verificationLevel)
	if err != nil {
		return SignInResult{}, err
	}
	return w.Submit(ctx, sub)
}

// SignInSubmission is a proven sign-in, ready to post to the page's
// submission endpoint (single use).
type SignInSubmission struct {
	URL  string
	Form url.Values
}

// PrepareSignIn opens the sign-in page and makes the proof, without
// submitting it.
func (w *Wallet) PrepareSignIn(ctx context.Context, authorizeURL, verificationLevel string) (SignInSubmission, error) {
	link, err := w.fetchWalletLink(ctx, authorizeURL)
	if err != nil {
		return SignInSubmission{}, err
	}
	q := link.Query()
	// The page's signal has no 0x prefix, so SDK hashing is its UTF-8 bytes,
	// as the server expects.
	item, err := w.Prove(ctx, ProofRequest{AppID: q.Get("app_id"), Action: q.Get("action"), Signal: q.Get("signal"),
		Identifier: verificationLevel, Environment: q.Get("environment")})
	if err != nil {
		return SignInSubmission{}, err
	}
	return SignInSubmission{URL: q.Get("submit"), Form: url.Values{
		"request_id":         {q.Get("request_id")},
		"proof":              {item.Proof},
		"merkle_root":        {item.MerkleRoot},
		"nullifier_hash":     {item.Nullifier},
		"verification_level": {item.Identifier},
	}}, nil
}

func (w *Wallet) fetchWalletLink(ctx context.Context, authorizeURL string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizeURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		if loc := resp.Header.Get("Location"); loc != "" {
			return nil, fmt.Errorf("wallet: the authorization request was refused: redirected to %s", loc)
		}
		return nil, fmt.Errorf("wallet: sign-in page: %s", resp.Status)
	}
	m := walletLinkPattern.FindSubmatch(page)
	if m == nil {
		return nil, errors.New("wallet: the sign-in page has no wallet link")
	}
	return url.Parse(html.UnescapeString(string(m[1])))
}

// Submit posts a prepared sign-in and reports where the browser would go.
func (w *Wallet) Submit(ctx context.Context, s SignInSubmission) (SignInResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(s.Form.Encode()))
	if err != nil {
		return SignInResult{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := w.HTTP.Do(req)
	if err != nil {
		return SignInResult{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
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
		return SignInResult{Location: loc, Params: params}, err
	case http.StatusOK:
		return SignInResult{FormPage: string(body), Params: formFields(string(body))}, nil
	default:
		return SignInResult{}, fmt.Errorf("wallet: submission: %s: %.300s", resp.Status, body)
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
