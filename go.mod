module github.com/wardenzk/warden

go 1.26.8

require github.com/go-zookeeper/zk v1.0.4

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2
	github.com/anishathalye/porcupine v1.3.1
	github.com/creack/pty v1.1.24
	github.com/klauspost/compress v1.20.3
	github.com/reeflective/readline v1.3.0
	go.etcd.io/raft/v3 v3.7.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.45.0
	google.golang.org/protobuf v1.36.11
)

require github.com/rivo/uniseg v0.4.7 // indirect
