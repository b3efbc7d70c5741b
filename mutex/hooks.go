package mutex

import "sync/atomic"

// afterUnlock, when set by a test, runs after the server applied an unlock and
// replaces its outcome with the error it returns: a reply lost on the way back.
var afterUnlock atomic.Pointer[func() error]
