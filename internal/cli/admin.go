package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/admin"
	"worldid/field"
	"worldid/internal/leaf/strictjson"
	"worldid/internal/server"
	"worldid/record"
)

// AdminFlags are the flags every command that calls the admin API shares
// (here and in the load tools, internal/bench).
type AdminFlags struct {
	URL, DataDir, Token string
	JSON                bool
}

// Register defines -admin-url, -data, -admin-token and -json on fs.
func (a *AdminFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&a.URL, "admin-url", serverURL(os.Getenv, "", "WORLDID_ADMIN_ADDR", "http://127.0.0.1:8081"),
		"admin API base URL (default from WORLDID_ADMIN_ADDR, the server's -admin-addr, when set)")
	fs.StringVar(&a.DataDir, "data", "./worldid-data", "data directory holding admin.token")
	fs.StringVar(&a.Token, "admin-token", "", "admin token (default: read from the data directory)")
	fs.BoolVar(&a.JSON, "json", false, "print JSON instead of text")
}

// Client returns an admin API client for the flags, reading the token from
// the data directory unless -admin-token is given.
func (a *AdminFlags) Client() (*admin.Client, error) {
	token := a.Token
	if token == "" {
		var err error
		if token, err = server.ReadAdminToken(a.DataDir); err != nil {
			return nil, err
		}
	}
	return &admin.Client{BaseURL: a.URL, Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// adminCommand is one CLI command that calls the admin API.
type adminCommand struct {
	// args names the positional arguments; their count is enforced, unless
	// the last ends in "..." (any number: call checks them).
	args  string
	flags func(fs *flag.FlagSet)
	// call runs the command and returns what -json prints and the text
	// printed otherwise.
	call func(ctx context.Context, c *admin.Client, args []string) (result any, text string, err error)
}

// adminCommands are keyed by "<command> <subcommand>".
func adminCommands() map[string]adminCommand {
	var (
		appReq        admin.CreateAppRequest
		uris          stringList
		logoutURIs    stringList
		responseTypes stringList
		identityReq   admin.AddIdentityRequest
		rootReq       admin.AddRootRequest
		limitReq      admin.ActionLimitRequest
		anchorReq     admin.AnchorRequest
		orbID         string
		idFile        string
		replace       bool
		newName       string
		newURIs       stringList
	)
	tree := func(identifier, environment *string) func(fs *flag.FlagSet) {
		return func(fs *flag.FlagSet) {
			fs.StringVar(identifier, "identifier", "orb", "credential type (tree): orb, device, document, secure_document, face, selfie")
			fs.StringVar(environment, "environment", "production", "production or staging")
		}
	}
	return map[string]adminCommand{
		"app create": {
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&appReq.Name, "name", "", "app name (required)")
				fs.Var(&uris, "redirect-uri", "allowed redirect URI (repeatable, at least one)")
				fs.StringVar(&appReq.Profile, "profile", "", `sign-in profile: empty (the v1 contract) or "current"`)
				fs.StringVar(&appReq.TokenEndpointAuthMethod, "token-endpoint-auth-method", "",
					"client_secret_basic, client_secret_post or private_key_jwt (default: either secret method)")
				fs.StringVar(&appReq.JWKS, "jwks", "", "the app's public JWKS (JSON), for private_key_jwt")
				fs.StringVar(&appReq.JWKSURI, "jwks-uri", "", "https URL of the app's public JWKS, for private_key_jwt (instead of -jwks)")
				fs.Var(&logoutURIs, "post-logout-redirect-uri", "where RP-initiated logout may return (repeatable)")
				fs.StringVar(&appReq.PKCE, "pkce", "required", "PKCE for the code flow: required (RFC 9700) or optional")
				fs.Var(&responseTypes, "response-type", `a response type the app may use, e.g. "code" (repeatable; default all)`)
				fs.StringVar(&appReq.SectorIdentifierURI, "sector-identifier-uri", "",
					"https URL of a JSON array listing every redirect URI: the app's sector (OIDC Core §8.1), fixed once set")
			},
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				appReq.RedirectURIs, appReq.PostLogoutRedirectURIs, appReq.ResponseTypes = uris, logoutURIs, responseTypes
				a, err := c.CreateApp(ctx, appReq)
				return a, fmt.Sprintf("app_id        %s\nrp_id         %s\nclient_secret %s   (shown once: store it now)\nredirect_uris %s\n",
					a.AppID, a.RPID, a.ClientSecret, strings.Join(a.RedirectURIs, " ")), err
			},
		},
		"app list": {
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				list, err := c.Apps(ctx)
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "APP_ID\tRP_ID\tENVIRONMENT\tSTATE\tCREATED\tUPDATED\tNAME\tREDIRECT_URIS")
				for _, a := range list.Apps {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.AppID, a.RPID, a.Environment, a.State,
						stamp(a.CreatedAt), stamp(a.UpdatedAt), a.Name, strings.Join(a.RedirectURIs, " "))
				}
				tw.Flush()
				return list, b.String(), err
			},
		},
		"app import": {
			args:  "FILE",
			flags: func(fs *flag.FlagSet) { fs.BoolVar(&replace, "replace", false, "replace apps whose app_id exists") },
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				return importApps(ctx, c, args[0], replace)
			},
		},
		"app update": {
			args: "APP_ID",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&newName, "name", "", "new name")
				fs.Var(&newURIs, "redirect-uri", "new redirect URIs (repeatable; replace all)")
			},
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				var req admin.UpdateAppRequest
				if newName != "" {
					req.Name = &newName
				}
				if len(newURIs) > 0 {
					uris := []string(newURIs)
					req.RedirectURIs = &uris
				}
				a, err := c.UpdateApp(ctx, args[0], req)
				return a, fmt.Sprintf("app %s updated: name %q, redirect_uris %s\n", a.AppID, a.Name, strings.Join(a.RedirectURIs, " ")), err
			},
		},
		"app rotate-secret": {
			args: "APP_ID",
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				s, err := c.RotateSecret(ctx, args[0])
				return s, fmt.Sprintf("client_secret %s   (shown once: store it now; the old secret no longer works)\n", s.ClientSecret), err
			},
		},
		"app rp-signing-key": rpSigningKeyCommand(),
		"app disable":        appSwitch(false),
		"app enable":         appSwitch(true),
		"app delete": {
			args: "APP_ID",
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				err := c.DeleteApp(ctx, args[0])
				return map[string]string{"app_id": args[0], "status": "deleted"}, "app " + args[0] + " deleted\n", err
			},
		},
		"identity add": {
			args: "COMMITMENT...",
			flags: func(fs *flag.FlagSet) {
				tree(&identityReq.Identifier, &identityReq.Environment)(fs)
				fs.StringVar(&idFile, "file", "", "file of identity commitments, one a line (after those given as arguments)")
			},
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				return addIdentities(ctx, c, identityReq, args, idFile)
			},
		},
		"roots add": {
			args: "ROOT",
			flags: func(fs *flag.FlagSet) {
				tree(&rootReq.Identifier, &rootReq.Environment)(fs)
				fs.IntVar(&rootReq.Depth, "depth", 30, "tree depth: selects the published Semaphore v3 verifying key")
				fs.StringVar(&rootReq.ProtocolVersion, "protocol", "3.0", `"3.0", or "4.0" for a root of World's 4.0 registry (-identifier and -depth then do not apply; ROOT is then decimal or 0x-hex, as anchor set's coordinates)`)
			},
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				rootReq.Root = args[0]
				added, err := c.AddRoot(ctx, rootReq)
				if rootReq.ProtocolVersion == "4.0" {
					return added, fmt.Sprintf("World ID 4.0 root %s added (%s)\n", added.Root, added.Environment), err
				}
				return added, fmt.Sprintf("external root %s added to %s/%s (depth %d)\n", added.Root, added.Identifier, added.Environment, added.Depth), err
			},
		},
		"anchor set": {
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&anchorReq.Kind, "kind", "", "issuer_key (of an issuer_schema_id) or oprf_key (of an rp_id)")
				fs.StringVar(&anchorReq.ID, "id", "", "the issuer_schema_id in decimal, or the rp_id (rp_…)")
				fs.StringVar(&anchorReq.X, "x", "", "BabyJubJub x coordinate, decimal or 0x-hex")
				fs.StringVar(&anchorReq.Y, "y", "", "BabyJubJub y coordinate, decimal or 0x-hex")
			},
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				set, err := c.SetAnchor(ctx, anchorReq)
				return set, fmt.Sprintf("%s of %s set\n", set.Kind, set.ID), err
			},
		},
		"anchor list": {
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				list, err := c.Anchors(ctx)
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KIND\tID\tX\tY")
				for _, a := range list.Anchors {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Kind, a.ID, a.X, a.Y)
				}
				tw.Flush()
				return list, b.String(), err
			},
		},
		"action limit": {
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&limitReq.RPID, "rp", "", "relying party id (rp_…)")
				fs.StringVar(&limitReq.Action, "action", "", "action")
				fs.StringVar(&limitReq.Environment, "environment", "production", "production or staging")
				fs.IntVar(&limitReq.MaxVerifications, "max", 0, "verifications allowed per nullifier (0 = unlimited)")
			},
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				set, err := c.SetActionLimit(ctx, limitReq)
				return set, fmt.Sprintf("action %q of %s (%s): max_verifications %d\n", set.Action, set.RPID, set.Environment, set.MaxVerifications), err
			},
		},
		"keys list": {
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				list, err := c.Keys(ctx)
				var b strings.Builder
				tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KID\tSTATE\tCREATED\tACTIVATES\tRETIRES\tREVOKED")
				for _, k := range list.Keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.KID, k.State, stamp(k.CreatedAt), stamp(k.ActivatesAt), stamp(k.RetiresAt), stamp(k.RevokedAt))
				}
				tw.Flush()
				return list, b.String(), err
			},
		},
		"keys revoke": {
			args: "KID", // base64url: may begin with "-", so operators write -- KID
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				err := c.RevokeKey(ctx, args[0])
				return map[string]string{"kid": args[0], "status": "revoked"},
					"signing key " + args[0] + " revoked: it left the JWKS and its tokens are inactive; if it was signing, a new key signs now\n", err
			},
		},
		"keys rotate": {
			call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
				err := c.RotateKeys(ctx)
				return map[string]string{"status": "rotation scheduled"}, "next signing key published; it starts signing after the pre-publication delay\n", err
			},
		},
		"signup import": {
			args: "FILE",
			call: importSignups,
		},
		"orbkey add": {
			args:  "KEY.pem",
			flags: func(fs *flag.FlagSet) { fs.StringVar(&orbID, "orb", "", "orb_id the key signs PCPs for") },
			call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
				pem, err := os.ReadFile(args[0])
				if err != nil {
					return nil, "", err
				}
				req := admin.OrbKeyRequest{OrbID: orbID, PublicKeyPEM: string(pem)}
				return map[string]string{"orb_id": orbID}, "orb key trusted for " + orbID + "\n", c.AddOrbKey(ctx, req)
			},
		},
		"refresh enable":  refreshSwitch(true),
		"refresh disable": refreshSwitch(false),
	}
}

func appSwitch(enable bool) adminCommand {
	return adminCommand{args: "APP_ID", call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
		a, err := c.SetAppEnabled(ctx, args[0], enable)
		return a, "app " + a.AppID + " " + a.State + "\n", err
	}}
}

// stamp formats an admin timestamp for tables; "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// importApps sends the file as it is in one request: the server checks
// every line and imports all apps or none, naming the line of a refusal.
func importApps(ctx context.Context, c *admin.Client, path string, replace bool) (any, string, error) {
	lines, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	imported, err := c.ImportApps(ctx, lines, replace)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	var text strings.Builder
	for _, a := range imported.Apps {
		fmt.Fprintf(&text, "imported %s (%s, %s)\n", a.AppID, a.RPID, a.Environment)
		if a.ClientSecret != "" {
			fmt.Fprintf(&text, "  client_secret %s   (generated, shown once: store it now)\n", a.ClientSecret)
		}
	}
	return imported.Apps, text.String(), nil
}

func refreshSwitch(on bool) adminCommand {
	return adminCommand{call: func(ctx context.Context, c *admin.Client, _ []string) (any, string, error) {
		word := map[bool]string{true: "enabled", false: "disabled"}[on]
		return admin.RefreshSwitch{Enabled: on}, "credential refresh " + word + "\n", c.SetRefresh(ctx, on)
	}}
}

// Admin runs `worldid <name> <sub> [flags] [args]`.
func Admin(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	commands := adminCommands()
	var sub string
	if len(args) > 0 {
		sub, args = args[0], args[1:]
	}
	cmd, ok := commands[name+" "+sub]
	if !ok {
		var subs []string
		for key := range commands {
			if w, s, _ := strings.Cut(key, " "); w == name {
				subs = append(subs, s)
			}
		}
		sort.Strings(subs)
		usage := fmt.Sprintf("usage: worldid %s %s [flags]   (worldid %s SUBCOMMAND -h: its flags)", name, strings.Join(subs, "|"), name)
		if IsHelp(sub) {
			fmt.Fprintln(stdout, usage)
			return nil
		}
		return UsageError{Err: errors.New(usage)}
	}
	var af AdminFlags
	fs := NewFlagSet(name+" "+sub, stderr)
	af.Register(fs)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	argCount := len(strings.Fields(cmd.args))
	if strings.HasSuffix(cmd.args, "...") {
		argCount = -1
	}
	if err := parseFlagsWithArgs(fs, args, argCount); err != nil {
		return err
	}
	c, err := af.Client()
	if err != nil {
		return err
	}
	result, text, err := cmd.call(ctx, c, fs.Args())
	if err != nil {
		return err
	}
	if af.JSON {
		return json.NewEncoder(stdout).Encode(result)
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// addIdentities inserts the commitments of args, then of file, into req's
// tree, in batches of admin.MaxIdentitiesPerRequest, each atomic.
func addIdentities(ctx context.Context, c *admin.Client, req admin.AddIdentityRequest, args []string, file string) (any, string, error) {
	commitments, err := readCommitments(args, file)
	if err != nil {
		return nil, "", err
	}
	tree := req.Identifier + "/" + req.Environment
	var (
		added []admin.AddedIdentity
		text  strings.Builder
	)
	for start := 0; start < len(commitments); start += admin.MaxIdentitiesPerRequest {
		req.IdentityCommitments = commitments[start:min(start+admin.MaxIdentitiesPerRequest, len(commitments))]
		a, err := c.AddIdentity(ctx, req)
		if err != nil && len(commitments) > admin.MaxIdentitiesPerRequest {
			err = fmt.Errorf("commitments %d–%d: %w (the %d before were added)", start+1, start+len(req.IdentityCommitments), err, start)
		}
		if err != nil {
			return nil, "", err
		}
		added = append(added, a)
		if a.Count == 1 {
			fmt.Fprintf(&text, "added to %s at index %d; new root %s\n", tree, a.Index, a.Root)
		} else {
			fmt.Fprintf(&text, "added %d to %s at indexes %d to %d; new root %s\n", a.Count, tree, a.Index, a.Index+a.Count-1, a.Root)
		}
	}
	return added, text.String(), nil
}

// readCommitments parses the commitments of args, then of file (one a line,
// blank lines skipped), and returns them canonical, so that a full batch
// fits the admin body limit. A malformed or repeated commitment is an error
// naming where it is, before anything is sent.
func readCommitments(args []string, file string) ([]string, error) {
	type source struct{ where, text string }
	var sources []source
	for i, a := range args {
		sources = append(sources, source{fmt.Sprintf("argument %d", i+1), a})
	}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			if text := strings.TrimSpace(sc.Text()); text != "" {
				sources = append(sources, source{fmt.Sprintf("%s:%d", file, line), text})
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if len(sources) == 0 {
		return nil, UsageError{Err: errors.New("identity add takes COMMITMENT arguments or -file F (one commitment a line)")}
	}
	out := make([]string, len(sources))
	seen := make(map[fr.Element]string, len(sources))
	for i, s := range sources {
		c, err := field.ParseIDCommitment(s.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.where, err)
		}
		if prev, ok := seen[c]; ok {
			return nil, fmt.Errorf("%s: repeats the commitment of %s", s.where, prev)
		}
		seen[c], out[i] = s.where, field.Format(&c)
	}
	return out, nil
}

// signupBatch is how many signup records one admin request carries.
const signupBatch = 200

func importSignups(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
	records, err := readSignupLines(args[0])
	if err != nil {
		return nil, "", err
	}
	if err := ImportSignups(ctx, c, records); err != nil {
		return nil, "", err
	}
	return map[string]int{"imported": len(records)}, fmt.Sprintf("imported %d signup records\n", len(records)), nil
}

// ImportSignups sends records to the admin API signupBatch at a time; an
// error names the batch's records (the earlier batches were imported).
func ImportSignups(ctx context.Context, c *admin.Client, records []record.Signup) error {
	for start := 0; start < len(records); start += signupBatch {
		batch := records[start:min(start+signupBatch, len(records))]
		if err := c.ImportSignups(ctx, admin.SignupImport{Signups: batch}); err != nil {
			return fmt.Errorf("records %d–%d: %w (earlier batches were imported)", start+1, start+len(batch), err)
		}
	}
	return nil
}

// readSignupLines parses a JSON-lines file strictly (unknown, case-folded
// or repeated members, bad UTF-8 and malformed lines are errors naming the
// line); blank lines are skipped.
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
		if err := strictjson.Decode(sc.Bytes(), &s); err != nil {
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
