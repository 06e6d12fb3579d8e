module github.com/ratelimit-go/ratelimit

go 1.25.0

require (
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/time v0.15.0
)
