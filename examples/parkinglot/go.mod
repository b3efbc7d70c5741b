module github.com/distsync/distsync/examples/parkinglot

go 1.25.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/distsync/distsync v0.0.0
	github.com/google/uuid v1.6.0 // indirect
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.3.0 // indirect
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	golang.org/x/sys v0.47.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/distsync/distsync => ../../
