package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"

	"worldid/bridge"
	"worldid/field"
	"worldid/internal/wallet"
	"worldid/record"
)

// walletFlags are the flags every wallet subcommand shares.
type walletFlags struct {
	file, server string
}

func (wf *walletFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&wf.file, "wallet", "./wallet.json", "identity file")
	fs.StringVar(&wf.server, "server", serverURL(os.Getenv, "WORLDID_BASE_URL", "WORLDID_ADDR", "http://127.0.0.1:8080"),
		"the worldid server's public URL (default from WORLDID_BASE_URL or WORLDID_ADDR, the server's -base-url or -addr, when set)")
}

func (wf *walletFlags) open() (*wallet.Wallet, error) {
	id, err := wallet.LoadIdentity(wf.file)
	if err != nil {
		return nil, err
	}
	return &wallet.Wallet{Identity: id, Server: wf.server, HTTP: wallet.NewHTTPClient(), KeyCache: wf.file + ".pk"}, nil
}

// parseAndOpen parses the flags, requiring n arguments, and opens the
// identity file.
func (wf *walletFlags) parseAndOpen(fs *flag.FlagSet, args []string, n int) (*wallet.Wallet, error) {
	if err := parseFlagsWithArgs(fs, args, n); err != nil {
		return nil, err
	}
	return wf.open()
}

// Wallet runs `worldid wallet <sub>`: the development wallet.
func Wallet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: worldid wallet new|prove|signin|approve|pcp|refresh [flags]   (worldid wallet SUBCOMMAND -h: its flags)"
	if len(args) == 0 {
		return UsageError{Err: errors.New(usage)}
	}
	if IsHelp(args[0]) {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	var wf walletFlags
	fs := NewFlagSet("wallet "+args[0], stderr)
	wf.register(fs)
	switch args[0] {
	case "new":
		return walletNew(fs, &wf, args[1:], stdout)
	case "prove":
		return walletProve(ctx, fs, &wf, args[1:], stdout)
	case "signin":
		return walletSignIn(ctx, fs, &wf, args[1:], stdout)
	case "approve":
		return walletApprove(ctx, fs, &wf, args[1:], stdout)
	case "pcp":
		return walletPCP(fs, &wf, args[1:], stdout)
	case "refresh":
		return walletRefresh(ctx, fs, &wf, args[1:], stdout)
	default:
		return UsageError{Err: fmt.Errorf("unknown subcommand 'wallet %s'", args[0])}
	}
}

func walletNew(fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	id, err := wallet.NewIdentityFile(wf.file, rand.Reader)
	if err != nil {
		return err
	}
	c := id.Commitment()
	fmt.Fprintf(stdout, "identity written to %s (mode 0600)\nidentity commitment %s\nregister it with:  worldid identity add %s\n",
		wf.file, field.Format(&c), field.Format(&c))
	return nil
}

func walletProve(ctx context.Context, fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	var req wallet.ProofRequest
	fs.StringVar(&req.AppID, "app", "", "app_id the proof is for (required)")
	fs.StringVar(&req.Action, "action", "", "action")
	fs.StringVar(&req.Signal, "signal", "", "signal, hashed as IDKit 4 does: 0x and an even number of hex digits as bytes, anything else (0x alone too) as UTF-8")
	fs.StringVar(&req.Identifier, "identifier", "orb", "tree to prove membership of")
	fs.StringVar(&req.Environment, "environment", "production", "production or staging")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	if req.AppID == "" {
		return UsageError{Err: fmt.Errorf("-app is required")}
	}
	w, err := wf.open()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	item, err := w.Prove(ctx, req)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(item)
}

func walletSignIn(ctx context.Context, fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	var level string
	fs.StringVar(&level, "level", "orb", "verification level to prove: orb or device")
	w, err := wf.parseAndOpen(fs, args, 1)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if isConnectURL(fs.Arg(0)) {
		return approveBridge(ctx, w, fs.Arg(0), level, false, stdout)
	}
	res, err := w.SignIn(ctx, fs.Arg(0), level)
	if err != nil {
		return err
	}
	// The last line is what a script reads: the final redirect URL, or the
	// form_post page's HTML (which ends the output).
	fmt.Fprintln(stdout, "approved in the wallet through the bridge; the browser is sent to:")
	if res.Location != "" {
		fmt.Fprintln(stdout, res.Location)
		return nil
	}
	fmt.Fprint(stdout, strings.TrimRight(res.FormPage, "\n")+"\n")
	return nil
}

// walletApprove answers a Wallet Bridge request named by a connect URL
// (the text of a scanned QR code), as the World App does.
func walletApprove(ctx context.Context, fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	var level string
	var refuse bool
	fs.StringVar(&level, "level", "", "verification level to prove: orb or device (default: the one the request asks for)")
	fs.BoolVar(&refuse, "refuse", false, "decline: answer verification_rejected instead of a proof")
	w, err := wf.parseAndOpen(fs, args, 1)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return approveBridge(ctx, w, fs.Arg(0), level, refuse, stdout)
}

// isConnectURL: a World ID connect URL rather than an authorization URL.
func isConnectURL(s string) bool {
	for _, base := range []string{bridge.ProductionVerify, bridge.StagingVerify, bridge.SandboxVerify} {
		if strings.HasPrefix(s, base+"?") {
			return true
		}
	}
	return false
}

// approveBridge reads the request, shows what it asks and answers it.
func approveBridge(ctx context.Context, w *wallet.Wallet, link, level string, refuse bool, stdout io.Writer) error {
	r, err := w.ReadBridgeRequest(ctx, link)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "request from app %s (action %q, %s)\n", r.Request.AppID, r.Request.Action, r.Environment())
	if host := r.ReturnHost(); host != "" {
		fmt.Fprintf(stdout, "returns you to %s\n", host)
	}
	if refuse {
		if err := w.RefuseBridgeRequest(ctx, r, bridge.ErrCodeVerificationRejected, rand.Reader); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "declined through the bridge")
		return nil
	}
	resp, err := w.AnswerBridgeRequest(ctx, r, level, rand.Reader)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "approved through the bridge (%s proof)\n", resp.VerificationLevel)
	return nil
}

// walletPCP builds a test PCP signed by a (new or given) test Orb key and
// writes it, the key and a matching signup record into a directory.
func walletPCP(fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	var out, orbID, signupID, keyHex string
	fs.StringVar(&out, "out", "./pcp", "directory to write the PCP into")
	fs.StringVar(&orbID, "orb", "orb-test-1", "orb_id")
	fs.StringVar(&signupID, "signup-id", "", "signup_id (default: random)")
	fs.StringVar(&keyHex, "orb-key", "", "test Orb private key, 64 hex (default: a new one)")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	id, err := wallet.LoadIdentity(wf.file)
	if err != nil {
		return err
	}
	orbKey, err := orbKeyOrNew(keyHex)
	if err != nil {
		return err
	}
	if signupID == "" {
		signupID = rand.Text()
	}
	now := time.Now()
	pcp, err := wallet.BuildTestPCP(rand.Reader, orbKey, orbID, signupID, now)
	if err != nil {
		return err
	}
	if err := wallet.SavePCP(out, pcp); err != nil {
		return err
	}
	c := id.Commitment()
	signup, _ := json.Marshal(record.Signup{IDCommitment: field.Format(&c), SignupID: signupID, VerifiedAt: now.UTC().Truncate(time.Second)})
	files := map[string][]byte{
		"orb-key.hex":  []byte(wallet.FormatOrbKey(orbKey) + "\n"),
		"orb-key.pem":  wallet.OrbKeyPEM(&orbKey.PublicKey),
		"signup.jsonl": append(signup, '\n'),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "test PCP written to %s (synthetic data, signed by a test Orb key)\nthe operator trusts the key and imports the signup record:\n  worldid orbkey add -orb %s %s\n  worldid signup import %s\nthen: worldid wallet refresh -sub 0x… -pcp %s\n",
		out, orbID, filepath.Join(out, "orb-key.pem"), filepath.Join(out, "signup.jsonl"), out)
	return nil
}

func orbKeyOrNew(keyHex string) (*ecdsa.PrivateKey, error) {
	if keyHex != "" {
		return wallet.ParseOrbKey(keyHex)
	}
	return wallet.GenerateOrbKey(rand.Reader)
}

// walletRefresh calls /api/v1/refresh as World App would and checks the
// credential against the issuer's published key.
func walletRefresh(ctx context.Context, fs *flag.FlagSet, wf *walletFlags, args []string, stdout io.Writer) error {
	var sub, pcpDir string
	fs.StringVar(&sub, "sub", "", "account id to pin, 0x + hex (required)")
	fs.StringVar(&pcpDir, "pcp", "", "directory written by 'wallet pcp' (default: credential-only refresh)")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	if sub == "" {
		return UsageError{Err: fmt.Errorf("-sub is required")}
	}
	w, err := wf.open()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req := &wallet.RefreshRequest{IssuerURL: wf.server, Identity: w.Identity, Sub: sub, Now: time.Now()}
	if pcpDir != "" {
		if req.PCP, err = wallet.LoadPCP(pcpDir); err != nil {
			return err
		}
	}
	if req.ProvingKey, err = w.ProvingKey(ctx); err != nil {
		return err
	}
	issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, wf.server)
	if err != nil {
		return err
	}
	cred, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		return err
	}
	b, err := cred.MarshalJSON()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "credential (signature verified against the issuer key):\n%s\n", b)
	return nil
}
