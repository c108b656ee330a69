module github.com/wardenzk/warden

go 1.26.8
