package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"worldid/admin"
	"worldid/record"
)

// adminFlags are the flags every admin CLI subcommand shares.
type adminFlags struct {
	url, dataDir, token string
	json                bool
}

func (a *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.url, "admin-url", "http://127.0.0.1:8081", "admin API base URL")
	fs.StringVar(&a.dataDir, "data", "./worldid-data", "data directory holding admin.token")
	fs.StringVar(&a.token, "admin-token", "", "admin token (default: read from the data directory)")
	fs.BoolVar(&a.json, "json", false, "print JSON instead of text")
}

func (a *adminFlags) client() (*admin.Client, error) {
	token := a.token
	if token == "" {
		var err error
		if token, err = readAdminToken(a.dataDir); err != nil {
			return nil, err
		}
	}
	return &admin.Client{BaseURL: a.url, Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func cmdApp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{fmt.Errorf("usage: worldid app create|list [flags]")}
	}
	var af adminFlags
	fs := newFlagSet("app "+args[0], stderr)
	af.register(fs)
	switch args[0] {
	case "create":
		var name string
		var uris stringList
		fs.StringVar(&name, "name", "", "app name (required)")
		fs.Var(&uris, "redirect-uri", "allowed redirect URI (repeatable, at least one)")
		if err := parseFlags(fs, args[1:], os.Getenv); err != nil {
			return err
		}
		c, err := af.client()
		if err != nil {
			return err
		}
		created, err := c.CreateApp(ctx, admin.CreateAppRequest{Name: name, RedirectURIs: uris})
		if err != nil {
			return err
		}
		if af.json {
			return json.NewEncoder(stdout).Encode(created)
		}
		fmt.Fprintf(stdout, "app_id        %s\nrp_id         %s\nclient_secret %s   (shown once: store it now)\nredirect_uris %s\n",
			created.AppID, created.RPID, created.ClientSecret, strings.Join(created.RedirectURIs, " "))
		return nil
	case "list":
		if err := parseFlags(fs, args[1:], os.Getenv); err != nil {
			return err
		}
		c, err := af.client()
		if err != nil {
			return err
		}
		list, err := c.Apps(ctx)
		if err != nil {
			return err
		}
		if af.json {
			return json.NewEncoder(stdout).Encode(list)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "APP_ID\tRP_ID\tNAME\tREDIRECT_URIS")
		for _, a := range list.Apps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.AppID, a.RPID, a.Name, strings.Join(a.RedirectURIs, " "))
		}
		return tw.Flush()
	default:
		return usageError{fmt.Errorf("unknown subcommand 'app %s'", args[0])}
	}
}

func cmdIdentity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError{fmt.Errorf("usage: worldid identity add [-identifier orb] [-environment production] COMMITMENT")}
	}
	var af adminFlags
	var req admin.AddIdentityRequest
	fs := newFlagSet("identity add", stderr)
	af.register(fs)
	fs.StringVar(&req.Identifier, "identifier", "orb", "credential type (tree): orb, device, document, secure_document, face, selfie")
	fs.StringVar(&req.Environment, "environment", "production", "production or staging")
	if err := parseFlagsWithArgs(fs, args[1:], 1); err != nil {
		return err
	}
	req.IdentityCommitment = fs.Arg(0)
	c, err := af.client()
	if err != nil {
		return err
	}
	added, err := c.AddIdentity(ctx, req)
	if err != nil {
		return err
	}
	if af.json {
		return json.NewEncoder(stdout).Encode(added)
	}
	fmt.Fprintf(stdout, "added to %s/%s at index %d; new root %s\n", req.Identifier, req.Environment, added.Index, added.Root)
	return nil
}

func cmdRoots(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError{fmt.Errorf("usage: worldid roots add [-identifier orb] [-environment production] [-depth 30] ROOT")}
	}
	var af adminFlags
	var req admin.AddRootRequest
	fs := newFlagSet("roots add", stderr)
	af.register(fs)
	fs.StringVar(&req.Identifier, "identifier", "orb", "credential type (tree)")
	fs.StringVar(&req.Environment, "environment", "production", "production or staging")
	fs.IntVar(&req.Depth, "depth", 30, "tree depth: selects the published Semaphore v3 verifying key")
	if err := parseFlagsWithArgs(fs, args[1:], 1); err != nil {
		return err
	}
	req.Root = fs.Arg(0)
	c, err := af.client()
	if err != nil {
		return err
	}
	added, err := c.AddRoot(ctx, req)
	if err != nil {
		return err
	}
	if af.json {
		return json.NewEncoder(stdout).Encode(added)
	}
	fmt.Fprintf(stdout, "external root %s added to %s/%s (depth %d)\n", added.Root, added.Identifier, added.Environment, added.Depth)
	return nil
}

func cmdAction(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "limit" {
		return usageError{fmt.Errorf("usage: worldid action limit -rp RP_ID -action ACTION -max N [-environment production]")}
	}
	var af adminFlags
	var req admin.ActionLimitRequest
	fs := newFlagSet("action limit", stderr)
	af.register(fs)
	fs.StringVar(&req.RPID, "rp", "", "relying party id (rp_…)")
	fs.StringVar(&req.Action, "action", "", "action")
	fs.StringVar(&req.Environment, "environment", "production", "production or staging")
	fs.IntVar(&req.MaxVerifications, "max", 0, "verifications allowed per nullifier (0 = unlimited)")
	if err := parseFlagsWithArgs(fs, args[1:], 0); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	set, err := c.SetActionLimit(ctx, req)
	if err != nil {
		return err
	}
	if af.json {
		return json.NewEncoder(stdout).Encode(set)
	}
	fmt.Fprintf(stdout, "action %q of %s (%s): max_verifications %d\n", set.Action, set.RPID, set.Environment, set.MaxVerifications)
	return nil
}

func cmdKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return usageError{fmt.Errorf("usage: worldid keys rotate")}
	}
	var af adminFlags
	fs := newFlagSet("keys rotate", stderr)
	af.register(fs)
	if err := parseFlagsWithArgs(fs, args[1:], 0); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	if err := c.RotateKeys(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "next signing key published; it starts signing after the pre-publication delay")
	return nil
}

// signupBatch is how many signup records one admin request carries.
const signupBatch = 200

func cmdSignup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "import" {
		return usageError{fmt.Errorf("usage: worldid signup import FILE  (JSON lines {id_commitment, signup_id, verified_at})")}
	}
	var af adminFlags
	fs := newFlagSet("signup import", stderr)
	af.register(fs)
	if err := parseFlagsWithArgs(fs, args[1:], 1); err != nil {
		return err
	}
	records, err := readSignupLines(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	for start := 0; start < len(records); start += signupBatch {
		batch := records[start:min(start+signupBatch, len(records))]
		if err := c.ImportSignups(ctx, admin.SignupImport{Signups: batch}); err != nil {
			return fmt.Errorf("records %d–%d: %w (earlier batches were imported)", start+1, start+len(batch), err)
		}
	}
	fmt.Fprintf(stdout, "imported %d signup records\n", len(records))
	return nil
}

// readSignupLines parses a JSON-lines file strictly: unknown fields and
// blank-line-free garbage are errors naming the line.
func readSignupLines(path string) ([]record.Signup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []record.Signup
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var s record.Signup
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	return out, nil
}

func cmdOrbKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError{fmt.Errorf("usage: worldid orbkey add -orb ORB_ID KEY.pem")}
	}
	var af adminFlags
	var req admin.OrbKeyRequest
	fs := newFlagSet("orbkey add", stderr)
	af.register(fs)
	fs.StringVar(&req.OrbID, "orb", "", "orb_id the key signs PCPs for")
	if err := parseFlagsWithArgs(fs, args[1:], 1); err != nil {
		return err
	}
	pem, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	req.PublicKeyPEM = string(pem)
	c, err := af.client()
	if err != nil {
		return err
	}
	if err := c.AddOrbKey(ctx, req); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "orb key trusted for %s\n", req.OrbID)
	return nil
}

func cmdRefreshSwitch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "enable" && args[0] != "disable") {
		return usageError{fmt.Errorf("usage: worldid refresh enable|disable")}
	}
	var af adminFlags
	fs := newFlagSet("refresh "+args[0], stderr)
	af.register(fs)
	if err := parseFlagsWithArgs(fs, args[1:], 0); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	if err := c.SetRefresh(ctx, args[0] == "enable"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "credential refresh %sd\n", args[0])
	return nil
}
