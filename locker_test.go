package distsync_test

import (
	"github.com/distsync/distsync"
	"github.com/distsync/distsync/mutex"
)

var _ distsync.Locker = (*mutex.Mutex)(nil)
