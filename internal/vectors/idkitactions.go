package vectors

// IDKitActions is the structure of idkit_actions.json: the field element
// @worldcoin/idkit-core 4.3.0 derives from a 4.0 uniqueness action string
// (action_field) beside its hashSignal of the same string (hash_signal),
// which differs for hex-looking actions (testdata/SOURCES.md).
type IDKitActions struct {
	Source  string `json:"source"`
	Actions []struct {
		Action      string `json:"action"`
		ActionField string `json:"action_field"`
		HashSignal  string `json:"hash_signal"`
	} `json:"actions"`
}
