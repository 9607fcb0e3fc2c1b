//go:build !(linux || darwin || freebsd)

package cli

import "errors"

// diskSpace is unknown here: the doctor reports the disk unchecked.
func diskSpace(string) (space, error) { return space{}, errors.New("not on this system") }
