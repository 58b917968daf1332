package semaphore

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fp"

	"worldid/internal/vectors"
)

func marshalKey(t *testing.T, vk *VerifyingKey) []byte {
	t.Helper()
	b, err := json.Marshal(vk)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeyFiles: each single-depth key file parses, equals the embedded
// published key for its depth, and round-trips through MarshalJSON.
func TestKeyFiles(t *testing.T) {
	f := loadSemaphoreVectors(t)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	for name, file := range f.VKFiles {
		depth, err := strconv.Atoi(name)
		if err != nil {
			continue // the all-depths file, tested below
		}
		vk := readKeyFile(t, file)
		pub, err := PublishedKey(depth)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(marshalKey(t, vk), marshalKey(t, pub)) {
			t.Errorf("%s differs from the embedded depth-%d key", file, depth)
		}
		again, err := ParseVerifyingKey(marshalKey(t, vk))
		if err != nil || !bytes.Equal(marshalKey(t, again), marshalKey(t, vk)) {
			t.Errorf("%s: MarshalJSON round trip: %v", file, err)
		}
		c.Inc()
	}
}

// TestAllDepthsFile: the vectors' all-depths file gives the same 17 keys as
// the embedded copy.
func TestAllDepthsFile(t *testing.T) {
	f := loadSemaphoreVectors(t)
	c := vectors.NewCounter(t, "semaphore_v3_vks_all_depths.json")
	b, err := os.ReadFile(filepath.Join(vectors.Dir(t), f.VKFiles["all"]))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := parseAllDepths(b)
	if err != nil {
		t.Fatal(err)
	}
	for depth := 16; depth <= 32; depth++ {
		pub, err := PublishedKey(depth)
		if err != nil {
			t.Fatal(err)
		}
		if keys[depth] == nil || !bytes.Equal(marshalKey(t, keys[depth]), marshalKey(t, pub)) {
			t.Errorf("depth %d differs", depth)
		}
		c.Inc()
	}
	for _, d := range []int{0, 15, 33} {
		if _, err := PublishedKey(d); err == nil {
			t.Errorf("PublishedKey(%d) succeeded", d)
		}
	}
	if a, _ := PublishedKey(30); a != mustPublished(t, 30) {
		t.Error("PublishedKey returns a new pointer per call")
	}
}

func mustPublished(t *testing.T, depth int) *VerifyingKey {
	t.Helper()
	vk, err := PublishedKey(depth)
	if err != nil {
		t.Fatal(err)
	}
	return vk
}

// keyJSON returns the depth-30 key as a generic JSON object to mutate.
func keyJSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(marshalKey(t, mustPublished(t, 30)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseVerifyingKeyRejects(t *testing.T) {
	q := fp.Modulus().String()
	qMinus1 := strings.TrimSuffix(q, "3") + "2"
	cases := []struct {
		name   string
		code   string
		mutate func(m map[string]any)
	}{
		{"protocol", CodeInvalidFormat, func(m map[string]any) { m["protocol"] = "plonk" }},
		{"curve", CodeInvalidFormat, func(m map[string]any) { m["curve"] = "bls12381" }},
		{"nPublic", CodeInvalidFormat, func(m map[string]any) { m["nPublic"] = 3 }},
		{"nPublic string", CodeInvalidFormat, func(m map[string]any) { m["nPublic"] = "4" }},
		{"missing alpha", CodeInvalidFormat, func(m map[string]any) { delete(m, "vk_alpha_1") }},
		{"missing IC", CodeInvalidFormat, func(m map[string]any) { delete(m, "IC") }},
		{"4 IC", CodeInvalidFormat, func(m map[string]any) { m["IC"] = m["IC"].([]any)[:4] }},
		{"6 IC", CodeInvalidFormat, func(m map[string]any) { m["IC"] = append(m["IC"].([]any), m["IC"].([]any)[0]) }},
		{"alpha z", CodeInvalidFormat, func(m map[string]any) { m["vk_alpha_1"].([]any)[2] = "0" }},
		{"alpha number", CodeInvalidFormat, func(m map[string]any) { m["vk_alpha_1"].([]any)[0] = 1 }},
		{"alpha leading zero", CodeInvalidFormat, func(m map[string]any) {
			a := m["vk_alpha_1"].([]any)
			a[0] = "0" + a[0].(string)
		}},
		{"alpha sign", CodeInvalidFormat, func(m map[string]any) { m["vk_alpha_1"].([]any)[0] = "+1" }},
		{"beta z", CodeInvalidFormat, func(m map[string]any) { m["vk_beta_2"].([]any)[2] = []any{"0", "1"} }},
		{"gamma short", CodeInvalidFormat, func(m map[string]any) { m["vk_gamma_2"] = m["vk_gamma_2"].([]any)[:2] }},
		{"alpha x = q", CodeInvalidProof, func(m map[string]any) { m["vk_alpha_1"].([]any)[0] = q }},
		{"alpha off curve", CodeInvalidProof, func(m map[string]any) { m["vk_alpha_1"].([]any)[1] = qMinus1 }},
		{"IC off curve", CodeInvalidProof, func(m map[string]any) { m["IC"].([]any)[3].([]any)[0] = "1" }},
		{"delta off twist", CodeInvalidProof, func(m map[string]any) { m["vk_delta_2"].([]any)[0].([]any)[0] = "1" }},
		{"beta swapped", CodeInvalidProof, func(m map[string]any) {
			x := m["vk_beta_2"].([]any)[0].([]any)
			y := m["vk_beta_2"].([]any)[1].([]any)
			x[0], x[1], y[0], y[1] = x[1], x[0], y[1], y[0]
		}},
		{"gamma outside G2", CodeInvalidProof, func(m map[string]any) {
			w := outsideSubgroup(t)
			dec := func(h string) string {
				var e fp.Element
				raw, _ := hex.DecodeString(h)
				e.SetBytes(raw)
				return e.Text(10)
			}
			m["vk_gamma_2"] = []any{[]any{dec(w[3]), dec(w[2])}, []any{dec(w[5]), dec(w[4])}, []any{"1", "0"}}
		}},
	}
	for _, tc := range cases {
		m := keyJSON(t)
		tc.mutate(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseVerifyingKey(b); err == nil {
			t.Errorf("%s: accepted", tc.name)
		} else {
			assertCode(t, err, tc.code, tc.name)
		}
	}
	for _, s := range []string{"", "{", "[]", "null", `{"IC": 1}`} {
		_, err := ParseVerifyingKey([]byte(s))
		assertCode(t, err, CodeInvalidFormat, s)
	}
}
