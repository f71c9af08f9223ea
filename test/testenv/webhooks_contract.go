package testenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// WebhookContract checks what the service POSTs to partners' endpoints
// against the document's webhooks, as Send checks answers against its
// paths: a delivered body must validate against the schema of its type's
// webhook (pb33f/libopenapi-validator), and a type without one is an
// error.
type WebhookContract struct {
	mu      sync.Mutex
	schemas map[string]*base.Schema
	v       schema_validation.SchemaValidator
}

// NewWebhookContract reads the webhooks of the document spec (JSON).
func NewWebhookContract(spec []byte) (*WebhookContract, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("parse the OpenAPI document: %w", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build the OpenAPI model: %w", err)
	}
	c := &WebhookContract{schemas: map[string]*base.Schema{}, v: schema_validation.NewSchemaValidator()}
	if m.Model.Webhooks == nil {
		return c, nil
	}
	for typ, item := range m.Model.Webhooks.FromOldest() {
		if item.Post == nil || item.Post.RequestBody == nil || item.Post.RequestBody.Content == nil {
			continue
		}
		mt := item.Post.RequestBody.Content.GetOrZero("application/json")
		if mt == nil || mt.Schema == nil {
			continue
		}
		c.schemas[typ] = mt.Schema.Schema()
	}
	return c, nil
}

// Types are the event types the document has a webhook with a body for.
func (c *WebhookContract) Types() []string {
	out := make([]string, 0, len(c.schemas))
	for typ := range c.schemas {
		out = append(out, typ)
	}
	return out
}

// Check validates a delivered body against its type's webhook.
func (c *WebhookContract) Check(body []byte) error {
	var ev struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("webhook body: %w", err)
	}
	s := c.schemas[ev.Type]
	if s == nil {
		return fmt.Errorf("a %q delivery, which the document has no webhook for: %.300s", ev.Type, body)
	}
	c.mu.Lock()
	ok, errs := c.v.ValidateSchemaBytes(s, body)
	c.mu.Unlock()
	if ok {
		return nil
	}
	var msgs []string
	for _, e := range errs {
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
		return errors.New("invalid")
	}
	return fmt.Errorf("a %s delivery the document's webhook does not allow: %s\nbody: %.500s", ev.Type, strings.Join(msgs, " | "), body)
}
