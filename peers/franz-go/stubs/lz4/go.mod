module github.com/pierrec/lz4/v4

go 1.21
