package cabinet

import (
	"errors"
	"net/http"
	"strconv"

	"ticketsales/internal/errs"
	"ticketsales/internal/states"
	"ticketsales/internal/webhooks"
)

// A page of an endpoint's deliveries, each with its latest attempts.
const (
	deliveriesPerPage = 50
	recentAttempts    = 3
)

// webhooks lists the company's webhook endpoints of both environments:
// where events go, which, and whether an endpoint was disabled and why.
func (c *cabinet) webhooks(w http.ResponseWriter, r *http.Request) {
	eps, err := webhooks.CompanyEndpoints(r.Context(), c.DB, user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
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
	ep, err := webhooks.CompanyEndpointByID(r.Context(), c.DB, company, id)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
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
	list, total, err := webhooks.EndpointDeliveries(r.Context(), c.DB, id, status, page, deliveriesPerPage, recentAttempts)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data := pageData{Title: "Webhook endpoint " + strconv.FormatInt(id, 10), Nav: "webhooks", Endpoint: ep,
		DeliveryStatus: status, Page: page, Deliveries: list}
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
