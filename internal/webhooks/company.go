package webhooks

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"ticketsales/internal/errs"
	"ticketsales/internal/states"
	"ticketsales/store"
)

// The organizer's cabinet sees a company's endpoints of both environments
// at once (partners see one environment's, by their key): these read them.

// CompanyEndpoint is an endpoint with the environment it is of.
type CompanyEndpoint struct {
	Endpoint
	Environment string // "production" or "sandbox"
}

// environments in the order the cabinet lists them.
var environments = []struct {
	name   string
	isTest bool
}{{"production", false}, {"sandbox", true}}

// CompanyEndpoints lists the company's endpoints, production's first (at
// most 200 of each environment).
func CompanyEndpoints(ctx context.Context, db bun.IDB, companyID int64) ([]CompanyEndpoint, error) {
	var out []CompanyEndpoint
	for _, env := range environments {
		list, _, err := store.ListWebhookEndpoints(ctx, db, companyID, env.isTest, 1, 200)
		if err != nil {
			return nil, err
		}
		for i := range list {
			out = append(out, CompanyEndpoint{Endpoint: *endpointView(&list[i], false), Environment: env.name})
		}
	}
	return out, nil
}

// CompanyEndpointByID returns one of the company's endpoints, of either
// environment; another company's is errs.NotFound.
func CompanyEndpointByID(ctx context.Context, db bun.IDB, companyID, id int64) (*CompanyEndpoint, error) {
	for _, env := range environments {
		e, err := store.GetWebhookEndpoint(ctx, db, companyID, env.isTest, id)
		if errors.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &CompanyEndpoint{Endpoint: *endpointView(e, false), Environment: env.name}, nil
	}
	return nil, fmt.Errorf("webhook endpoint %d of company %d: %w", id, companyID, errs.NotFound)
}

// EndpointDeliveries returns a page of the endpoint's deliveries (status
// "": any), newest first, each with at most recent of its latest attempts,
// and how many there are. The caller has made sure the endpoint is the
// company's (CompanyEndpointByID).
func EndpointDeliveries(ctx context.Context, db bun.IDB, endpointID int64, status states.DeliveryStatus, page, perPage, recent int) ([]*Delivery, int, error) {
	return deliveries(ctx, db, endpointID, status, page, perPage, recent)
}
