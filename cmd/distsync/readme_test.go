package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEMatchesHelp: the README's command reference quotes "distsync
// help" and every command's --help word for word.
func TestREADMEMatchesHelp(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Command line: `distsync`\n")
	require.True(t, ok, "no command line section in README.md")
	section, _, _ = strings.Cut(section, "\n## ")

	_, out, _ := invokeEnv(t, nil, "", "help")
	assert.Contains(t, section, "```\n$ distsync help\n"+out+"```\n", "README: distsync help")
	for _, cmd := range commands {
		_, out, _ := invokeEnv(t, nil, "", cmd.name, "--help")
		assert.Contains(t, section, "<code>distsync "+cmd.name+" --help</code></summary>\n\n```\n"+out+"```\n", "README: distsync %s --help", cmd.name)
	}
}
