//go:build rsaz

// Package rsaz is a prototype, built only with the build tag rsaz and
// imported by no default build: RSA-2048 PKCS #1 v1.5 signing whose two
// 1024-bit CRT exponentiations run side by side in AVX-512 IFMA assembly
// (52-bit limbs, VPMADD52LUQ/VPMADD52HUQ), the technique of OpenSSL's
// rsaz-avx512, written for the Go assembler so the binary stays static and
// pure Go. It exists to measure what such a kernel gives against
// crypto/rsa (issue 29); it has had no review and no constant-time audit,
// so nothing in Herald uses it.
package rsaz
