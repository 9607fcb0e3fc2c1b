package login

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// bcryptCost is the work factor of the stored hash: bcrypt's default and
// OWASP's minimum (10), some 60 ms per check on a small server. Online
// guessing is bounded by the login rate limit, not by the cost; the cost
// only slows the cracking of a stolen hash, and the database it would be
// stolen from holds the actors' private keys anyway. bcrypt rather than
// argon2id for the same reason: its hash string carries its own salt and
// cost, and it needs no memory parameter to size against the server's
// 100 MiB memory limit, while argon2id's edge is against offline cracking
// on GPUs.
const bcryptCost = bcrypt.DefaultCost

// MinPasswordLength is the shortest password `herald admin password` and
// `herald actor password` accept.
const MinPasswordLength = 12

// HashPassword returns the hash to store for password.
func HashPassword(password string) (string, error) {
	if utf8.RuneCountInString(password) < MinPasswordLength {
		return "", errors.New("the password is too short: use at least 12 characters")
	}
	if len(password) > 72 {
		// bcrypt reads 72 bytes; a longer password would be silently cut.
		return "", errors.New("the password is too long: use at most 72 bytes")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcryptCost)
	return string(h), err
}

// CheckPassword reports whether password matches hash.
func CheckPassword(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// NewPassword returns a random password: 20 characters, 120 bits.
func NewPassword() string {
	b := make([]byte, 15)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
