//go:build !(amd64 || arm64) || purego

package babyjub

// constantTimeBuild: this build uses gnark-crypto's generic Go field
// arithmetic, which branches on a carry: signing is not constant time.
const constantTimeBuild = false
