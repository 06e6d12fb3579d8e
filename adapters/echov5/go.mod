module github.com/ratelimit-go/ratelimit/adapters/echov5

go 1.25.0

require (
	github.com/labstack/echo/v5 v5.4.6
	github.com/ratelimit-go/ratelimit v0.0.0-00010101000000-000000000000
)

require golang.org/x/time v0.15.0 // indirect

replace github.com/ratelimit-go/ratelimit => ../..
