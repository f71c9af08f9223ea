// Package compose holds checks for the deployment files at the repository
// root (Dockerfile and docker-compose.yml). It contains no runtime code:
// its tests load and validate those files so that a broken deployment
// definition fails `go test ./...` instead of the next `docker compose up`.
package compose
