package core

import (
	"crypto/sha1"
	"encoding/hex"
)

func shaOf(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}
