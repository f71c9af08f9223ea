# syntax=docker/dockerfile:1

# One image holds all three binaries; docker-compose.yml picks the one to
# run with `command:`. The default is the HTTP API.

FROM golang:1.26-bookworm AS build
WORKDIR /src

# Dependencies in their own layer, so it is reused until go.mod/go.sum change.
# The Go SDK's module (sdk/go) is required with a replace to its directory:
# its go.mod comes too.
COPY go.mod go.sum ./
COPY sdk/go/go.mod sdk/go/go.sum ./sdk/go/
RUN go mod download

COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/ \
        ./cmd/api \
        ./cmd/worker \
        ./cmd/ticketctl

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/api /out/worker /out/ticketctl /usr/local/bin/
USER nonroot:nonroot
ENV HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
CMD ["/usr/local/bin/api"]
