// stickyproof's franz-go live member. stickyproof.live.members.franz_go builds it in a temporary copy
// after `go mod edit -require=github.com/twmb/franz-go@VERSION` (the version peers/versions.lock pins
// for franz-go); the versions below are that default.
module stickyproof.peers/franz-go-member

go 1.26.0

require (
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)
