package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"worldid/field"
	"worldid/wallet"
)

// walletFlags are the flags every wallet subcommand shares.
type walletFlags struct {
	file, server string
}

func (wf *walletFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&wf.file, "wallet", "./wallet.json", "identity file")
	fs.StringVar(&wf.server, "server", "http://127.0.0.1:8080", "the worldid server's public URL")
}

func (wf *walletFlags) open() (*wallet.Wallet, error) {
	id, err := wallet.LoadIdentity(wf.file)
	if err != nil {
		return nil, err
	}
	return &wallet.Wallet{Identity: id, Server: wf.server, HTTP: wallet.NewHTTPClient(), KeyCache: wf.file + ".pk"}, nil
}

func cmdWallet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("usage: worldid wallet new|prove|signin [flags]")}
	}
	var wf walletFlags
	fs := newFlagSet("wallet "+args[0], stderr)
	wf.register(fs)
	switch args[0] {
	case "new":
		return walletNew(fs, &wf, args[1:], stdout)
	case "prove":
		return walletProve(ctx, fs, &wf, args[1:], stdout)
	case "signin":
		return walletSignIn(ctx, fs, &wf, args[1:], stdout)
	default:
		return usageError{fmt.Errorf("unknown subcommand 'wallet %s'", args[0])}
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
	fs.StringVar(&req.Signal, "signal", "", "signal (0x-hex is hashed as bytes, anything else as UTF-8)")
	fs.StringVar(&req.Identifier, "identifier", "orb", "tree to prove membership of")
	fs.StringVar(&req.Environment, "environment", "production", "production or staging")
	if err := parseFlagsWithArgs(fs, args, 0); err != nil {
		return err
	}
	if req.AppID == "" {
		return usageError{fmt.Errorf("-app is required")}
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
	if err := parseFlagsWithArgs(fs, args, 1); err != nil {
		return err
	}
	w, err := wf.open()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res, err := w.SignIn(ctx, fs.Arg(0), level)
	if err != nil {
		return err
	}
	if res.Location != "" {
		fmt.Fprintf(stdout, "redirect to %s\n", res.Location)
		return nil
	}
	fmt.Fprintln(stdout, "form_post to the redirect URI with:")
	for k, v := range res.Params {
		fmt.Fprintf(stdout, "  %s=%s\n", k, v[0])
	}
	return nil
}
