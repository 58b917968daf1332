//go:build (amd64 || arm64) && !purego

package babyjub

// constantTimeBuild: gnark-crypto's field Mul and Square run as its
// branch-free assembly in this build (package documentation,
// "Implementation notes").
const constantTimeBuild = true
