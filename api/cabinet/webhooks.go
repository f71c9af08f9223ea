package cabinet

import (
	"errors"
	"net/http"
	"strconv"

	"ticketsales/internal/errs"
	"ticketsales/internal/states"
	"ticketsales/store"
)

// webhookEndpoint is a partner's endpoint as the cabinet lists it.
type webhookEndpoint struct {
	store.WebhookEndpoint
	Environment string
}

// webhookDelivery is one delivery with its latest attempts.
type webhookDelivery struct {
	store.WebhookDelivery
	Recent []store.WebhookAttempt
}

const deliveriesPerPage = 50

// webhooks lists the company's webhook endpoints of both environments:
// where events go, which, and whether an endpoint was disabled and why.
func (c *cabinet) webhooks(w http.ResponseWriter, r *http.Request) {
	company := user(r).CompanyID
	var eps []webhookEndpoint
	for _, env := range []struct {
		name   string
		isTest bool
	}{{"production", false}, {"sandbox", true}} {
		list, _, err := store.ListWebhookEndpoints(r.Context(), c.DB, company, env.isTest, 1, 200)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		for _, e := range list {
			eps = append(eps, webhookEndpoint{WebhookEndpoint: e, Environment: env.name})
		}
	}
	c.render(w, r, http.StatusOK, "webhooks", pageData{Title: "Webhooks", Nav: "webhooks", Endpoints: eps})
}

// webhookEndpointPage shows one endpoint's deliveries, newest first, with
// their latest attempts; another company's endpoint is not there.
func (c *cabinet) webhookEndpointPage(w http.ResponseWriter, r *http.Request) {
	company := user(r).CompanyID
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		c.notFound(w, r)
		return
	}
	var ep *webhookEndpoint
	for _, env := range []struct {
		name   string
		isTest bool
	}{{"production", false}, {"sandbox", true}} {
		e, err := store.GetWebhookEndpoint(r.Context(), c.DB, company, env.isTest, id)
		if errors.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			c.fail(w, r, err)
			return
		}
		ep = &webhookEndpoint{WebhookEndpoint: *e, Environment: env.name}
		break
	}
	if ep == nil {
		c.notFound(w, r)
		return
	}
	status := states.DeliveryStatus(r.URL.Query().Get("status"))
	switch status {
	case "", states.DeliveryPending, states.DeliveryDelivered, states.DeliveryFailed:
	default:
		status = ""
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = min(max(page, 1), 1000)
	list, total, err := store.ListDeliveries(r.Context(), c.DB, id, status, page, deliveriesPerPage)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	ids := make([]string, len(list))
	for i, d := range list {
		ids[i] = d.EventID
	}
	attempts, err := store.DeliveryAttempts(r.Context(), c.DB, id, ids, 3)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data := pageData{Title: "Webhook endpoint " + strconv.FormatInt(id, 10), Nav: "webhooks", Endpoint: ep,
		DeliveryStatus: status, Page: page}
	for _, d := range list {
		data.Deliveries = append(data.Deliveries, webhookDelivery{WebhookDelivery: d, Recent: attempts[d.EventID]})
	}
	link := func(p int) string {
		q := "?page=" + strconv.Itoa(p)
		if status != "" {
			q += "&status=" + string(status)
		}
		return "/cabinet/webhooks/" + strconv.FormatInt(id, 10) + q
	}
	if page*deliveriesPerPage < total {
		data.NextURL = link(page + 1)
	}
	if page > 1 {
		data.PrevURL = link(page - 1)
	}
	c.render(w, r, http.StatusOK, "webhook", data)
}
