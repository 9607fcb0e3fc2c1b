package mastoapi

import "time"

// SetTokenCheck makes streams look their token up every d, for the
// connections opened until the returned function puts it back.
func SetTokenCheck(d time.Duration) (restore func()) {
	was := tokenCheck.Swap(int64(d))
	return func() { tokenCheck.Store(was) }
}

// SetPushRetry makes a failed push wait d before its first retry.
func SetPushRetry(d time.Duration) (restore func()) {
	was := pushRetry.Swap(int64(d))
	return func() { pushRetry.Store(was) }
}
