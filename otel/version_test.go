package distsyncotel

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "4f2a9c1e8d3b77aa"}, {Key: "vcs.time", Value: "2026-11-25T21:30:00Z"}}
	for _, c := range []struct {
		what string
		bi   *debug.BuildInfo
		want string
	}{
		{"a program requiring a release", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{{Path: ScopeName, Version: "v0.1.0"}}, Settings: vcs}, "v0.1.0"},
		{"a replace by another version", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: ScopeName, Version: "v0.1.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.1.1"}}}}, "v0.1.1"},
		{"distsync's source tree", &debug.BuildInfo{Main: debug.Module{Path: repoPath + "/examples/cache", Version: "(devel)"},
			Deps: []*debug.Module{{Path: ScopeName, Version: "(devel)"}}, Settings: vcs}, "devel+4f2a9c1e8d3b 2026-11-25T21:30:00Z"},
		{"another repository's source tree", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{{Path: ScopeName, Version: "(devel)", Replace: &debug.Module{Path: "../distsync/otel"}}}, Settings: vcs}, "devel"},
		{"a test without VCS", &debug.BuildInfo{Main: debug.Module{Path: ScopeName}}, "devel"},
	} {
		assert.Equal(t, c.want, version(c.bi, true), c.what)
	}
	assert.Equal(t, "devel", version(nil, false))
}
