package dstest

import (
	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
)

// ExampleOptions returns Client options for database db of the shared test
// server. An Example's package declares the Options its Examples connect
// with, as a program would, and its TestMain sets them with this; when no
// server can be started they stay the zero Options, the Examples fail to
// connect, and the tests say why. Main (in TestMain) stops the server.
func ExampleOptions(db int) distsync.Options {
	s, err := redistest.SharedServer()
	if err != nil {
		return distsync.Options{}
	}
	o := Options(s)
	o.DB = db
	return o
}
