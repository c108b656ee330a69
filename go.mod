module github.com/wardenzk/warden

go 1.26.8

require github.com/go-zookeeper/zk v1.0.4

require go.uber.org/goleak v1.3.0
