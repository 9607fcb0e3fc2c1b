package admin

import "herald/internal/login"

// HashPassword returns the hash to store for the console password
// (login.HashPassword: bcrypt, at least 12 characters).
func HashPassword(password string) (string, error) { return login.HashPassword(password) }

// NewPassword returns a random password (login.NewPassword).
func NewPassword() string { return login.NewPassword() }
