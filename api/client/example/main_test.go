package main

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api/client"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestSandboxCheckThroughTheGeneratedClient runs the example's sandbox
// check against the real stack: every call goes through the client
// generated from the document and every answer is decoded into its types,
// and checked against the served document by the independent validator,
// so a document that does not fit the answers (a null the schema forbids,
// a missing status) fails here as it would for a partner.
func TestSandboxCheckThroughTheGeneratedClient(t *testing.T) {
	s := testenv.NewStack(t)
	s.StartWorker(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	key, _ := s.Key(t, company, apikey.Sandbox)
	c, err := client.NewClientWithResponses(s.URL, client.WithRequestEditorFn(Bearer(key)),
		client.WithHTTPClient(testenv.ContractClient()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := SandboxCheck(ctx, c, t.Logf); err != nil {
		t.Fatal(err)
	}
}
