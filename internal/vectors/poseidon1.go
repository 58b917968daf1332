package vectors

import "testing"

// Poseidon1 is the structure of poseidon1.json: circomlib Poseidon's
// parameters and known answers, and the Semaphore v3 values built on it
// (testdata/SOURCES.md), shared by the tests of poseidon, semaphore and
// refresh.
type Poseidon1 struct {
	Parameters struct {
		RoundsF        int                   `json:"rounds_f"`
		RoundsPByWidth map[string]int        `json:"rounds_p_by_width"`
		GrainCheck     map[string]GrainCheck `json:"grain_check"`
	} `json:"parameters"`
	KATs []struct {
		Name      string   `json:"name"`
		Inputs    []string `json:"inputs"`
		Output    string   `json:"output"`
		OutputHex string   `json:"output_hex"`
	} `json:"kats"`
	Semaphore Poseidon1Semaphore `json:"semaphore"`
}

// GrainCheck is one width's published Grain LFSR output in poseidon1.json.
type GrainCheck struct {
	T               int        `json:"t"`
	Inputs          int        `json:"inputs"`
	RoundsF         int        `json:"rounds_f"`
	RoundsP         int        `json:"rounds_p"`
	NRoundConstants int        `json:"n_round_constants"`
	First4Hex       []string   `json:"round_constants_first4_hex"`
	LastHex         string     `json:"round_constants_last_hex"`
	MDSHex          [][]string `json:"mds_hex"`
}

// Poseidon1Semaphore is the semaphore member of poseidon1.json. Leaf
// indices are ints, as semaphore.MerklePath's.
type Poseidon1Semaphore struct {
	Identity struct {
		IdentityNullifier string `json:"identity_nullifier"`
		IdentityTrapdoor  string `json:"identity_trapdoor"`
		Secret            string `json:"secret"`
		SecretHex         string `json:"secret_hex"`
		Commitment        string `json:"commitment"`
		CommitmentHex     string `json:"commitment_hex"`
	} `json:"identity"`
	ZeroSubtreeHashes struct {
		ValuesHex []string `json:"values_hex"`
	} `json:"zero_subtree_hashes"`
	SingleLeafRoots []struct {
		Depth     int    `json:"depth"`
		LeafIndex int    `json:"leaf_index"`
		LeafHex   string `json:"leaf_hex"`
		RootHex   string `json:"root_hex"`
	} `json:"single_leaf_roots"`
	TreeExample struct {
		Depth     int      `json:"depth"`
		LeavesHex []string `json:"leaves_hex"`
		RootHex   string   `json:"root_hex"`
		Proofs    []struct {
			LeafIndex   int      `json:"leaf_index"`
			LeafHex     string   `json:"leaf_hex"`
			PathIndices []int    `json:"path_indices"`
			SiblingsHex []string `json:"siblings_hex"`
		} `json:"proofs"`
	} `json:"tree_example"`
	HashToField []struct {
		Name      string  `json:"name"`
		InputUTF8 *string `json:"input_utf8"`
		InputHex  *string `json:"input_hex"`
		OutputHex string  `json:"output_hex"`
	} `json:"hash_to_field"`
	ExternalNullifier []struct {
		AppID     string  `json:"app_id"`
		Action    *string `json:"action"`
		OutputHex string  `json:"output_hex"`
	} `json:"external_nullifier"`
	NullifierHash []struct {
		ExternalNullifierHex string `json:"external_nullifier_hex"`
		IdentityNullifier    string `json:"identity_nullifier"`
		OutputHex            string `json:"output_hex"`
	} `json:"nullifier_hash"`
}

// LoadPoseidon1 loads poseidon1.json and returns it with its counter.
func LoadPoseidon1(t testing.TB) (*Poseidon1, *Counter) {
	t.Helper()
	var f Poseidon1
	Load(t, "poseidon1.json", &f)
	return &f, NewCounter(t, "poseidon1.json")
}
