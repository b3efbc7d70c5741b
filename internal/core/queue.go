package core

import _ "embed"

// QueueLib is the FIFO queue of waiters (queue.lua) that the fair lock and
// the election keep beside their hash, its keys passed as arguments: prepend
// it to a NewScript or NewFastScript body, after which the primitive's own
// helpers and body may call its dsq_ functions.
//
//go:embed queue.lua
var QueueLib string
