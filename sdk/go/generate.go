package ticketsales

// client.gen.go is generated with oapi-codegen (settings in
// oapi-codegen.yaml) from the OpenAPI document the service serves
// (sdk/openapi.json in the repository, a copy the server's tests keep equal
// to the served one). Maintainers regenerate it after an API change, from
// the repository, with
//
//	cd sdk/go && go generate
//
// the same as scripts/clients.sh write, which also writes the document and
// the TypeScript types (sdk/ts/src/schema.d.ts). scripts/clients.sh check,
// run by `make test`, fails while the committed files lag behind the code.
// Partners never run it: the module they get has the generated code.

//go:generate ../../scripts/clients.sh write
