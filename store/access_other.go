//go:build !unix

package store

// accessError adds nothing where file ownership is not Unix's.
func accessError(_ string, err error) error { return err }
