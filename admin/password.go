package admin

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// bcryptCost is the work factor of the stored hash: about a quarter of a
// second per check on a small server, which makes guessing slow without
// making the one login an operator does a day slow. bcrypt rather than
// argon2id: its hash string carries its own salt and cost, it needs no
// memory parameter to size against a 100 MiB process limit, and the login
// rate limit already bounds online guessing; argon2id's edge is against
// offline cracking of a stolen hash, and the database it would be stolen
// from holds the private keys anyway.
const bcryptCost = 12

// MinPasswordLength is the shortest password `herald admin password`
// accepts.
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

// checkPassword reports whether password matches hash.
func checkPassword(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// NewPassword returns a random password: 20 characters, 120 bits.
func NewPassword() string {
	b := make([]byte, 15)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
