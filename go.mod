module github.com/distsync/distsync

go 1.25.0
