// Command luagen writes, for every X.in.lua below the given folder (default
// the module root), X.lua: its source with the calls of the inline helpers
// of lib.lua and of its primitive's own helper file replaced by their bodies
// (Inline). Run it with go generate ./internal/core.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := "../.."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, err := Generated(root)
	if err == nil {
		for path, text := range files {
			if err = os.WriteFile(path, []byte(text), 0o644); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "luagen:", err)
		os.Exit(1)
	}
}
