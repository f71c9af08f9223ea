// Package ticketsales is the ticket sales API's Go SDK. client.gen.go is
// generated with oapi-codegen from the OpenAPI document the service serves
// (sdk/openapi.json in the repository, a copy the server's tests keep equal
// to the served one).
//
// Maintainers regenerate it after an API change, from the repository, with
//
//	cd sdk/go && go generate
//
// (the same as scripts/clients.sh write, which also writes the document and
// the TypeScript types in sdk/ts/src/schema.d.ts). scripts/clients.sh check,
// run by `make test`, fails while the committed files lag behind the code.
package ticketsales

//go:generate ../../scripts/clients.sh write
