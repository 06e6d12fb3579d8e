package main

// The packages the README's Go blocks import that the example does not:
// imported here so that this module requires them (and go mod tidy keeps
// them), for TestReadmeSnippetsCompile. A README block that imports a
// package of another module needs it added here.
import (
	_ "github.com/gin-gonic/gin"
	_ "github.com/labstack/echo/v4"
	_ "github.com/labstack/echo/v4/middleware"
	_ "google.golang.org/grpc"

	_ "github.com/ratelimit-go/ratelimit/adapters/echo"
	_ "github.com/ratelimit-go/ratelimit/adapters/gin"
	_ "github.com/ratelimit-go/ratelimit/adapters/grpc"
)
