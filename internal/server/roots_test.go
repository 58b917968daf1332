package server

import (
	"strings"
	"testing"
)

// TestRootsFlags: -roots-rpc and -roots-contract are parsed, the defaults
// are World's contracts, errors never echo an RPC URL (it may hold a key),
// and without -roots-rpc there is no root source.
func TestRootsFlags(t *testing.T) {
	c := Config{RootsRPC: "ethereum=https://eth.example/SECRET, worldchain=http://127.0.0.1:8545",
		RootsContract: "device/production=ethereum:identity-manager:0x00000000000000000000000000000000000000aa"}
	if err := c.parseRoots(); err != nil {
		t.Fatal(err)
	}
	src, trees, err := c.rootSource(nil)
	if err != nil || src == nil {
		t.Fatalf("root source: %v", err)
	}
	for _, tree := range []string{"orb/production", "device/production", "world_id_4/production", "world_id_4/staging"} {
		if !src.Has(tree) {
			t.Errorf("%s not asked; trees %v", tree, trees)
		}
	}
	if src.Has("orb/staging") {
		t.Error("orb/staging is on sepolia, which has no URL")
	}
	for _, bad := range []Config{
		{RootsRPC: "https://eth.example/SECRET"},
		{RootsRPC: "ethereum=ftp://eth.example/SECRET"},
		{RootsContract: "orb/production=ethereum:other:0x00"},
	} {
		err := bad.parseRoots()
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	var none Config
	if err := none.parseRoots(); err != nil {
		t.Fatal(err)
	}
	if src, _, _ := none.rootSource(nil); src != nil {
		t.Error("a root source without -roots-rpc")
	}
}
