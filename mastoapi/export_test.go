package mastoapi

import "time"

// SetTokenCheck makes streams look their token up every d, for the
// connections opened until the returned function puts it back.
func SetTokenCheck(d time.Duration) (restore func()) {
	was := tokenCheck.Swap(int64(d))
	return func() { tokenCheck.Store(was) }
}
