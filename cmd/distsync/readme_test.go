package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEMatchesHelp: the command reference (docs/command.md) quotes "distsync
// help" and every command's --help word for word.
func TestREADMEMatchesHelp(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/command.md")
	require.NoError(t, err)
	section := string(data)

	_, out, _ := invokeEnv(t, nil, "", "help")
	assert.Contains(t, section, "```\n$ distsync help\n"+out+"```\n", "README: distsync help")
	for _, cmd := range commands {
		_, out, _ := invokeEnv(t, nil, "", cmd.name, "--help")
		assert.Contains(t, section, "<code>distsync "+cmd.name+" --help</code></summary>\n\n```\n"+out+"```\n", "README: distsync %s --help", cmd.name)
	}
}
