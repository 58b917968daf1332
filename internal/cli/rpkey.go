package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"worldid/admin"
)

// rpSigningKeyCommand is `worldid app rp-signing-key APP_ID -key-file FILE`
// (or -clear): the app's World ID 4.0 RP signing key, read from a file so
// that it never appears in a command line or shell history.
func rpSigningKeyCommand() adminCommand {
	var keyFile string
	var clear bool
	return adminCommand{
		args: "APP_ID",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&keyFile, "key-file", "", "file holding the secp256k1 RP signing key as 64 hex digits")
			fs.BoolVar(&clear, "clear", false, "remove the key: the app's sign-in is World ID 3.0 again")
		},
		call: func(ctx context.Context, c *admin.Client, args []string) (any, string, error) {
			if (keyFile == "") == !clear {
				return nil, "", errors.New("give exactly one of -key-file and -clear")
			}
			var key string
			if keyFile != "" {
				b, err := os.ReadFile(keyFile)
				if err != nil {
					return nil, "", err
				}
				key = strings.TrimSpace(string(b))
			}
			a, err := c.SetRPSigningKey(ctx, args[0], key)
			if a.RPSigner == "" {
				return a, fmt.Sprintf("app %s: no RP signing key; sign-in uses World ID 3.0\n", a.AppID), err
			}
			return a, fmt.Sprintf("app %s: RP signing key set (signer %s); sign-in also asks for World ID 4.0\n", a.AppID, a.RPSigner), err
		},
	}
}
