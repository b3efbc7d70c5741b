package distsync

import "github.com/redis/rueidis"

// RueidisOption is the rueidis client New makes for o (tests only).
func RueidisOption(o Options) rueidis.ClientOption { return o.rueidisOption() }
