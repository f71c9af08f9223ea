// Package client is the API's Go client, generated with oapi-codegen from
// the OpenAPI document the service serves (openapi.json here, a copy the
// tests keep equal to the served one). Partners may import it as is; the
// example directory runs the contract's sandbox check with it. ts/ holds
// the same API's TypeScript types (openapi-typescript).
//
// Regenerate after an API change with `go generate ./api/client`;
// scripts/clients.sh check (run by `make test`) fails while the committed
// files lag behind the code.
package client

//go:generate ../../scripts/clients.sh write
