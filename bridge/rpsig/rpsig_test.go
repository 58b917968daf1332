package rpsig

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

type vectors struct {
	HashToField []struct {
		InputUTF8 *string `json:"input_utf8"`
		InputHex  *string `json:"input_hex"`
		Out       string  `json:"out"`
	} `json:"hash_to_field"`
	Message []struct {
		Nonce     string  `json:"nonce"`
		CreatedAt uint64  `json:"created_at"`
		ExpiresAt uint64  `json:"expires_at"`
		Action    *string `json:"action"`
		MsgHex    string  `json:"msg_hex"`
	} `json:"message"`
	SignRequest []struct {
		SigningKey string  `json:"signing_key"`
		Random     string  `json:"random"`
		CreatedAt  int64   `json:"created_at"`
		TTL        int64   `json:"ttl"`
		Action     *string `json:"action"`
		Nonce      string  `json:"nonce"`
		Sig        string  `json:"sig"`
	} `json:"sign_request"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/rp_signature.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.HashToField) == 0 || len(v.Message) == 0 || len(v.SignRequest) == 0 {
		t.Fatal("rp_signature.json has an empty vector group")
	}
	return v
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHashToFieldVectors(t *testing.T) {
	for _, v := range loadVectors(t).HashToField {
		var in []byte
		if v.InputUTF8 != nil {
			in = []byte(*v.InputUTF8)
		} else {
			in = unhex(t, *v.InputHex)
		}
		if got := HashToField(in); "0x"+hex.EncodeToString(got[:]) != v.Out {
			t.Errorf("hash_to_field(%x) = %x, want %s", in, got, v.Out)
		}
	}
}

func TestMessageVectors(t *testing.T) {
	for _, v := range loadVectors(t).Message {
		var nonce [32]byte
		copy(nonce[:], unhex(t, v.Nonce))
		if got := hex.EncodeToString(Message(nonce, v.CreatedAt, v.ExpiresAt, v.Action)); got != v.MsgHex {
			t.Errorf("message:\n got %s\nwant %s", got, v.MsgHex)
		}
	}
}

func TestSignRequestVectors(t *testing.T) {
	for _, v := range loadVectors(t).SignRequest {
		if v.Random != "000102...1f" {
			t.Fatalf("unknown random %q", v.Random)
		}
		random := unhex(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
		k, err := ParsePrivateKey(v.SigningKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := k.SignRequest(bytes.NewReader(random), time.Unix(v.CreatedAt, 0), time.Duration(v.TTL)*time.Second, v.Action)
		if err != nil {
			t.Fatal(err)
		}
		if c.NonceHex() != v.Nonce || c.ExpiresAt != uint64(v.CreatedAt+v.TTL) {
			t.Errorf("nonce %s expires %d", c.NonceHex(), c.ExpiresAt)
		}
		if c.SignatureHex() != v.Sig {
			t.Errorf("signature (action %v):\n got %s\nwant %s", v.Action, c.SignatureHex(), v.Sig)
		}
		got, err := RecoverAddress(Digest(Message(c.Nonce, c.CreatedAt, c.ExpiresAt, v.Action)), c.Signature)
		if err != nil || got != k.Address() {
			t.Errorf("recovered %x, %v; want %x", got, err, k.Address())
		}
	}
}

func TestDefaultTTLAndRecover(t *testing.T) {
	k, err := ParsePrivateKey("0x" + strings.Repeat("11", 32))
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.SignRequest(rand.NewChaCha8([32]byte{9}), time.Unix(1800000000, 0), 0, nil)
	if err != nil || c.ExpiresAt-c.CreatedAt != 300 {
		t.Fatalf("ttl %d %v", c.ExpiresAt-c.CreatedAt, err)
	}
	d := Digest(Message(c.Nonce, c.CreatedAt, c.ExpiresAt, nil))
	if a, err := RecoverAddress(d, c.Signature); err != nil || a != k.Address() {
		t.Fatal("own signature does not recover")
	}
	d[0] ^= 1
	if a, _ := RecoverAddress(d, c.Signature); a == k.Address() {
		t.Fatal("another digest recovers the signer")
	}
	// The well-known address of private key 1.
	one, _ := ParsePrivateKey(strings.Repeat("0", 63) + "1")
	if a := one.Address(); !bytes.Equal(a[:], unhex(t, "7e5f4552091a69125d5dfcb7b8c2659029395bdf")) {
		t.Fatalf("address of key 1: %x", a)
	}
}

func TestParsePrivateKeyRejects(t *testing.T) {
	for _, bad := range []string{"", "0x", strings.Repeat("0", 64), strings.Repeat("f", 64), strings.Repeat("1", 63), "0x" + strings.Repeat("zz", 32)} {
		if _, err := ParsePrivateKey(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
