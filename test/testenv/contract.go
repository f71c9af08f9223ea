package testenv

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// Every response a test receives through Send is checked against the
// OpenAPI document the same server serves, by an independent validator
// (pb33f/libopenapi-validator, strict about status codes, nullability and
// required fields): a drift between the code and the document fails the
// test that met it. A followed redirect is checked as the answer to the
// request it ended at. Requests to paths the document does not describe
// (deliberately malformed paths) are not checked.

var contracts sync.Map // server base URL -> *contract

type contract struct {
	once sync.Once
	v    validator.Validator
	err  error
}

// contractOf loads and caches the document of the server at base.
func contractOf(c *http.Client, base string) (validator.Validator, error) {
	got, _ := contracts.LoadOrStore(base, &contract{})
	k := got.(*contract)
	k.once.Do(func() {
		res, err := c.Get(base + "/openapi.json")
		if err != nil {
			k.err = fmt.Errorf("fetch the OpenAPI document: %w", err)
			return
		}
		defer res.Body.Close()
		spec, err := io.ReadAll(res.Body)
		if err != nil {
			k.err = fmt.Errorf("read the OpenAPI document: %w", err)
			return
		}
		doc, err := libopenapi.NewDocument(spec)
		if err != nil {
			k.err = fmt.Errorf("parse the OpenAPI document: %w", err)
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			k.err = fmt.Errorf("build the validator: %w", errors.Join(errs...))
			return
		}
		k.v = v
	})
	return k.v, k.err
}

// checkContract validates res (its body already read into body) against
// the document of the server req went to. It returns nil for requests the
// document does not describe.
func checkContract(c *http.Client, req *http.Request, res *http.Response, body []byte) error {
	if res.Request != nil {
		// A followed redirect: the response answers the last request (a
		// 303's GET), and the document must describe that one.
		req = res.Request
	}
	if res.StatusCode == http.StatusNotFound && !strings.HasPrefix(req.URL.Path, "/v1/") && !strings.HasPrefix(req.URL.Path, "/aggregator/v1/") {
		return nil
	}
	v, err := contractOf(c, req.URL.Scheme+"://"+req.URL.Host)
	if err != nil {
		return err
	}
	return checkAgainst(v, req, res, body)
}

// checkAgainst validates res (its body read into body), the answer to req,
// with the document's validator v.
func checkAgainst(v validator.Validator, req *http.Request, res *http.Response, body []byte) error {
	check := *res
	if strings.EqualFold(res.Header.Get("Content-Encoding"), "gzip") {
		// The test asked for gzip itself, so the client left it packed.
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("%s %s: gzip body: %w", req.Method, req.URL.Path, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("%s %s: gzip body: %w", req.Method, req.URL.Path, err)
		}
	}
	check.Body = io.NopCloser(bytes.NewReader(body))
	ok, errs := v.ValidateHttpResponse(req, &check)
	if ok {
		return nil
	}
	var msgs []string
	for _, e := range errs {
		if e.ValidationType == "path" { // not in the document: not checked
			continue
		}
		m := e.Message
		if e.Reason != "" {
			m += ": " + e.Reason
		}
		for _, se := range e.SchemaValidationErrors {
			m += fmt.Sprintf("; %s at %s", se.Reason, se.FieldPath)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %s\nbody: %.500s",
		req.Method, req.URL.Path, res.StatusCode, strings.Join(msgs, " | "), body)
}

// ContractClient is an HTTP client whose every response is checked against
// the document of the server it came from, as Send's are: for clients
// that bring their own requests (the generated API client).
func ContractClient() *http.Client {
	c := &http.Client{Timeout: time.Minute}
	c.Transport = contractTransport{c: c}
	return c
}

type contractTransport struct{ c *http.Client }

func (t contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Path == "/openapi.json" {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err := checkContract(&http.Client{Timeout: time.Minute}, req, res, body); err != nil {
		return nil, err
	}
	return res, nil
}

// DocumentTransport is a transport that checks every answer against the
// OpenAPI document spec, as ContractClient does against the served one:
// the old-client test (test/sdk) holds today's answers to a document
// partners generated their clients from.
func DocumentTransport(spec []byte) (http.RoundTripper, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("parse the OpenAPI document: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("build the validator: %w", errors.Join(errs...))
	}
	return documentTransport{v}, nil
}

type documentTransport struct{ v validator.Validator }

func (t documentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err := checkAgainst(t.v, req, res, body); err != nil {
		return nil, err
	}
	return res, nil
}
