// stickyproof's franz-go harness. stickyproof.peers.franz_go builds it in a temporary copy after
// `go mod edit -require=github.com/twmb/franz-go@VERSION` (kmsg then follows that release's own
// requirement); the versions below are the default, peers/versions.lock.
module stickyproof.peers/franz-go

go 1.26.0

require (
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)
