//go:build !distsync_primitives

package main

// buildTags are the tags TestBinary builds the command with: those of this
// test binary.
const buildTags = ""
