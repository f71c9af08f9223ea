package testenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestContractCatchesDrift: a response the served document does not allow
// (a null where it says string, an undeclared status) fails Send; one it
// allows passes; paths it does not describe are not checked.
func TestContractCatchesDrift(t *testing.T) {
	const doc = `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/thing": {"get": {
		"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
			"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}}}}}}`
	answer := `{"name": "x"}`
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/openapi.json":
			_, _ = w.Write([]byte(doc))
		case "/thing":
			w.WriteHeader(status)
			_, _ = w.Write([]byte(answer))
		default:
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	get := func(path string) error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		_, err := Send(srv.Client(), req)
		return err
	}
	if err := get("/thing"); err != nil {
		t.Fatalf("an allowed answer was refused: %v", err)
	}
	answer = `{"name": null}`
	if err := get("/thing"); err == nil || !strings.Contains(err.Error(), "does not allow") {
		t.Fatalf("a null name passed: %v", err)
	}
	answer, status = `{"name": "x"}`, http.StatusConflict
	if err := get("/thing"); err == nil {
		t.Fatal("an undeclared 409 passed")
	}
	if err := get("/elsewhere"); err != nil {
		t.Fatalf("a path the document does not describe was checked: %v", err)
	}
}
