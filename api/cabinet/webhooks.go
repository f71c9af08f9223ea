package cabinet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"ticketsales/internal/apikey"
	"ticketsales/internal/errs"
	"ticketsales/internal/states"
	"ticketsales/internal/webhooks"
)

// The webhooks section: the company's endpoints of both environments,
// managed through the same webhooks.Service the API uses (the same URL
// rules, caps and delivery workflows), each action a POST answered with a
// 303 to a page that says what it did.

// A page of an endpoint's deliveries, each with its latest attempts.
const (
	deliveriesPerPage = 50
	recentAttempts    = 3
)

// Session keys: the signing secret to show once on its endpoint's page,
// and the create form's one-time token.
const (
	secretKey         = "webhook_secret"
	secretEndpointKey = "webhook_secret_endpoint"
	formTokenKey      = "webhook_form_token"
)

// endpointForm is the endpoint form as given, shown again when refused.
type endpointForm struct {
	Environment string
	URL         string
	Description string
	EventTypes  []string // none: all
	Token       string
}

// webhooksView is the list page's own data.
type webhooksView struct {
	Endpoints []webhooks.CompanyEndpoint
	Form      endpointForm
	Types     []string
	Problems  []string
}

// endpointPage is an endpoint's page's own data.
type endpointPage struct {
	Endpoint *webhooks.CompanyEndpoint
	// Secret is the signing secret, shown on the one page view after it
	// was made (creation, rotation).
	Secret         string
	Form           endpointForm
	Types          []string
	Problems       []string
	Deliveries     []*webhooks.Delivery
	DeliveryStatus states.DeliveryStatus
	Page           int
	PrevURL        string
	NextURL        string
}

// deliveryPage is a delivery's page's own data.
type deliveryPage struct {
	Endpoint *webhooks.CompanyEndpoint
	Delivery *webhooks.DeliveryDetail
	// NextRetry is when the next attempt is due (zero: none is); RetryDue:
	// its time has come (the attempt is due or under way).
	NextRetry time.Time
	RetryDue  bool
}

func eventTypes() []string {
	out := make([]string, len(states.WebhookEventTypes))
	for i, t := range states.WebhookEventTypes {
		out[i] = string(t)
	}
	return out
}

// webhooks lists the company's webhook endpoints of both environments
// (where events go, which, whether one is failing or disabled and why),
// with the form that adds one.
func (c *cabinet) webhooks(w http.ResponseWriter, r *http.Request) {
	c.webhooksPage(w, r, http.StatusOK, "", webhooksView{Form: endpointForm{Environment: apikey.Sandbox}})
}

func (c *cabinet) webhooksPage(w http.ResponseWriter, r *http.Request, status int, message string, v webhooksView) {
	eps, err := webhooks.CompanyEndpoints(r.Context(), c.DB, user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Endpoints, v.Types = eps, eventTypes()
	v.Form.Token = c.formToken(r)
	c.render(w, r, status, "webhooks", pageData{Title: "Webhooks", Nav: "webhooks", Message: message, Data: v})
}

// formToken is the session's one-time token of the create form: a form
// sent twice (a double click, the back button) makes one endpoint.
func (c *cabinet) formToken(r *http.Request) string {
	if t := c.sessions.GetString(r.Context(), formTokenKey); t != "" {
		return t
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	t := hex.EncodeToString(b)
	c.sessions.Put(r.Context(), formTokenKey, t)
	return t
}

// readEndpointForm reads the URL, description and event types; problems
// are the form's own (the service checks the rest, as for the API).
func readEndpointForm(r *http.Request) (endpointForm, []string) {
	f := endpointForm{Environment: r.PostFormValue("environment"), URL: strings.TrimSpace(r.PostFormValue("url")),
		Description: strings.TrimSpace(r.PostFormValue("description")), EventTypes: r.PostForm["event_types"]}
	var problems []string
	if f.URL == "" {
		problems = append(problems, "URL: enter the address events are sent to.")
	} else if len(f.URL) > 2000 {
		problems = append(problems, "URL: at most 2000 characters.")
	}
	if len([]rune(f.Description)) > 500 {
		problems = append(problems, "Description: at most 500 characters.")
	}
	if len(f.EventTypes) > 20 {
		problems = append(problems, "Event types: at most 20.")
	}
	return f, problems
}

func (f endpointForm) types() *[]states.WebhookEventType {
	out := make([]states.WebhookEventType, len(f.EventTypes))
	for i, t := range f.EventTypes {
		out[i] = states.WebhookEventType(t)
	}
	return &out
}

// createEndpoint adds an endpoint through the service, then shows its page
// with the signing secret, once.
func (c *cabinet) createEndpoint(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	form, problems := readEndpointForm(r)
	token := c.sessions.GetString(r.Context(), formTokenKey)
	if token == "" || r.PostFormValue("token") != token {
		// Sent before (the token is spent when an endpoint is made), or
		// from a page of an ended session.
		c.done(w, r, "/cabinet/webhooks", "This form was sent already: the endpoint it added is listed below. Nothing else was added.")
		return
	}
	if form.Environment != apikey.Sandbox && form.Environment != apikey.Production {
		problems = append([]string{"Environment: choose sandbox or production."}, problems...)
	}
	refuse := func(status int, message string, problems []string) {
		c.webhooksPage(w, r, status, message, webhooksView{Form: form, Problems: problems})
	}
	if len(problems) > 0 {
		refuse(http.StatusUnprocessableEntity, "The endpoint was not added: correct the form.", problems)
		return
	}
	if c.Webhooks == nil {
		c.fail(w, r, errors.New("webhooks service not configured"))
		return
	}
	e, err := c.Webhooks.Create(r.Context(), webhooks.Principal(u.CompanyID, form.Environment),
		webhooks.EndpointInput{URL: &form.URL, Description: &form.Description, EventTypes: form.types()})
	if err != nil {
		if status, message, problems, ok := refusal(err); ok {
			refuse(status, message, problems)
			return
		}
		c.fail(w, r, err)
		return
	}
	c.sessions.Remove(r.Context(), formTokenKey)
	c.showSecretOnce(r, e.ID, e.Secret)
	c.Log.InfoContext(r.Context(), "cabinet: webhook endpoint created", "user_id", u.ID, "company_id", u.CompanyID,
		"endpoint_id", e.ID, "environment", form.Environment)
	c.done(w, r, endpointURL(e.ID), fmt.Sprintf("Endpoint %d added: it receives %s events from now on.", e.ID, form.Environment))
}

// showSecretOnce keeps a new signing secret in the session for the next
// view of its endpoint's page, which takes it out.
func (c *cabinet) showSecretOnce(r *http.Request, endpointID int64, secret string) {
	c.sessions.Put(r.Context(), secretEndpointKey, endpointID)
	c.sessions.Put(r.Context(), secretKey, secret)
}

func endpointURL(id int64) string { return "/cabinet/webhooks/" + strconv.FormatInt(id, 10) }

// refusal words an error of the service for the page: bad input (422, the
// service's messages), the endpoint cap (409), the per-minute caps (429),
// a state that does not allow the action (409), Temporal unreachable
// (503). ok is false for any other error.
func refusal(err error) (status int, message string, problems []string, ok bool) {
	var invalid *errs.ValidationError
	var limit *errs.LimitError
	var rate *errs.RateError
	var state *errs.StateError
	switch {
	case errors.As(err, &invalid):
		for _, f := range invalid.Fields {
			problems = append(problems, fieldProblem(f))
		}
		return http.StatusUnprocessableEntity, "Nothing was changed: correct the form.", problems, true
	case errors.As(err, &limit):
		return http.StatusConflict, limit.Problem().Detail, nil, true
	case errors.As(err, &rate):
		return http.StatusTooManyRequests, rate.Problem().Detail, nil, true
	case errors.As(err, &state):
		return http.StatusConflict, fmt.Sprintf("Not done: %s %s is %s.", state.Entity, state.ID, state.Status), nil, true
	case errors.Is(err, errs.Unavailable):
		return http.StatusServiceUnavailable, "The delivery could not be started right now; try again in a moment.", nil, true
	}
	return 0, "", nil, false
}

// fieldProblem names the form's field a service's message is about.
func fieldProblem(f errs.FieldError) string {
	switch {
	case f.Location == "body.url":
		return "URL: " + f.Message + "."
	case strings.HasPrefix(f.Location, "body.event_types"):
		return fmt.Sprintf("Event type %v: %s.", f.Value, f.Message)
	}
	return f.Message + "."
}

// endpointFromPath is the company's endpoint the path names; another
// company's, or an unknown one, answers 404 (ok false: answered).
func (c *cabinet) endpointFromPath(w http.ResponseWriter, r *http.Request) (*webhooks.CompanyEndpoint, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		c.notFound(w, r)
		return nil, false
	}
	ep, err := webhooks.CompanyEndpointByID(r.Context(), c.DB, user(r).CompanyID, id)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, false
	}
	return ep, true
}

// webhookEndpointPage shows one endpoint: its settings and the forms that
// change them, its actions, and its deliveries, newest first, with their
// latest attempts.
func (c *cabinet) webhookEndpointPage(w http.ResponseWriter, r *http.Request) {
	ep, ok := c.endpointFromPath(w, r)
	if !ok {
		return
	}
	v := endpointPage{Form: endpointForm{URL: ep.URL, Description: ep.Description, EventTypes: ep.EventTypes}}
	if c.sessions.GetInt64(r.Context(), secretEndpointKey) == ep.ID {
		// Shown this once: a reload no longer has it.
		v.Secret = c.sessions.PopString(r.Context(), secretKey)
		c.sessions.Remove(r.Context(), secretEndpointKey)
	}
	c.endpointPage(w, r, http.StatusOK, "", ep, v)
}

func (c *cabinet) endpointPage(w http.ResponseWriter, r *http.Request, status int, message string, ep *webhooks.CompanyEndpoint, v endpointPage) {
	q := r.URL.Query()
	v.Endpoint, v.Types = ep, eventTypes()
	v.DeliveryStatus = states.DeliveryStatus(q.Get("status"))
	switch v.DeliveryStatus {
	case "", states.DeliveryPending, states.DeliveryDelivered, states.DeliveryFailed:
	default:
		v.DeliveryStatus = ""
	}
	page, _ := strconv.Atoi(q.Get("page"))
	v.Page = min(max(page, 1), 1000)
	list, total, err := webhooks.EndpointDeliveries(r.Context(), c.DB, ep.ID, v.DeliveryStatus, v.Page, deliveriesPerPage, recentAttempts)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Deliveries = list
	link := func(p int) string {
		q := "?page=" + strconv.Itoa(p)
		if v.DeliveryStatus != "" {
			q += "&status=" + string(v.DeliveryStatus)
		}
		return endpointURL(ep.ID) + q
	}
	if v.Page*deliveriesPerPage < total {
		v.NextURL = link(v.Page + 1)
	}
	if v.Page > 1 {
		v.PrevURL = link(v.Page - 1)
	}
	c.render(w, r, status, "webhook", pageData{Title: "Webhook endpoint " + strconv.FormatInt(ep.ID, 10), Nav: "webhooks",
		Message: message, Data: v})
}

// endpointAction runs an action on the endpoint the path names through the
// service, as the endpoint's environment; a refusal is shown on the
// endpoint's page (with the form as sent), success goes back to it with
// the notice act returns.
func (c *cabinet) endpointAction(name string, act func(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ep, ok := c.endpointFromPath(w, r)
		if !ok {
			return
		}
		if c.Webhooks == nil {
			c.fail(w, r, errors.New("webhooks service not configured"))
			return
		}
		u := user(r)
		notice, err := act(r, webhooks.Principal(u.CompanyID, ep.Environment), ep)
		if err != nil {
			form := endpointForm{URL: ep.URL, Description: ep.Description, EventTypes: ep.EventTypes}
			var fp *formProblems
			if errors.As(err, &fp) {
				c.endpointPage(w, r, http.StatusUnprocessableEntity, "Nothing was changed: correct the form.", ep,
					endpointPage{Form: fp.form, Problems: fp.problems})
				return
			}
			if errors.Is(err, errs.NotFound) {
				c.notFound(w, r)
				return
			}
			status, message, problems, ok := refusal(err)
			if !ok {
				c.fail(w, r, err)
				return
			}
			if name == "edited" {
				form, _ = readEndpointForm(r)
			}
			var rate *errs.RateError
			if errors.As(err, &rate) {
				w.Header().Set("Retry-After", retryAfter(rate.Problem().RetryAfter))
			}
			c.endpointPage(w, r, status, message, ep, endpointPage{Form: form, Problems: problems})
			return
		}
		c.Log.InfoContext(r.Context(), "cabinet: webhook endpoint "+name, "user_id", u.ID, "company_id", u.CompanyID, "endpoint_id", ep.ID)
		c.done(w, r, endpointURL(ep.ID), notice)
	}
}

// formProblems: the edit form's own problems, shown with the form as sent.
type formProblems struct {
	form     endpointForm
	problems []string
}

func (f *formProblems) Error() string { return strings.Join(f.problems, " ") }

// editEndpoint changes the URL, description and event types (the URL
// checked as at creation).
func (c *cabinet) editEndpoint(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	form, problems := readEndpointForm(r)
	if len(problems) > 0 {
		return "", &formProblems{form: form, problems: problems}
	}
	if _, err := c.Webhooks.Update(r.Context(), p, ep.ID, webhooks.EndpointInput{URL: &form.URL, Description: &form.Description,
		EventTypes: form.types()}); err != nil {
		return "", err
	}
	return "Endpoint saved.", nil
}

// disableEndpoint stops deliveries to the endpoint; the reason says who.
func (c *cabinet) disableEndpoint(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	off := false
	if _, err := c.Webhooks.Update(r.Context(), p, ep.ID, webhooks.EndpointInput{Enabled: &off,
		DisabledReason: "disabled in the cabinet by " + user(r).Email}); err != nil {
		return "", err
	}
	return "Endpoint disabled: it receives no events until it is enabled again.", nil
}

// enableEndpoint sends events to the endpoint again and clears why it was
// disabled and its failure streak.
func (c *cabinet) enableEndpoint(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	on := true
	if _, err := c.Webhooks.Update(r.Context(), p, ep.ID, webhooks.EndpointInput{Enabled: &on}); err != nil {
		return "", err
	}
	return "Endpoint enabled: it receives new events from now on.", nil
}

// rotateSecret gives the endpoint a new secret, shown once on its page;
// the old one signs beside it for webhooks.SecretOverlap.
func (c *cabinet) rotateSecret(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	e, err := c.Webhooks.RotateSecret(r.Context(), p, ep.ID)
	if err != nil {
		return "", err
	}
	c.showSecretOnce(r, e.ID, e.Secret)
	return fmt.Sprintf("New signing secret made. The old one keeps signing beside it for %d hours.",
		int(webhooks.SecretOverlap.Hours())), nil
}

// testEndpoint sends a webhook.test event to the endpoint (the API's test
// ping, with its per-minute cap).
func (c *cabinet) testEndpoint(r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	sent, err := c.Webhooks.Ping(r.Context(), p, ep.ID)
	if err != nil {
		return "", err
	}
	return "Test event " + sent.EventID + " sent: its delivery is listed below.", nil
}

// deliveryFromPath is the company endpoint's delivery the path names (404
// for any other).
func (c *cabinet) deliveryFromPath(w http.ResponseWriter, r *http.Request) (*webhooks.CompanyEndpoint, *webhooks.DeliveryDetail, bool) {
	ep, ok := c.endpointFromPath(w, r)
	if !ok {
		return nil, nil, false
	}
	if c.Webhooks == nil {
		c.fail(w, r, errors.New("webhooks service not configured"))
		return nil, nil, false
	}
	d, err := c.Webhooks.CompanyDelivery(r.Context(), user(r).CompanyID, ep, r.PathValue("event"))
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return nil, nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, nil, false
	}
	return ep, d, true
}

// webhookDeliveryPage shows one delivery: the body sent, every attempt,
// and when the next one is due.
func (c *cabinet) webhookDeliveryPage(w http.ResponseWriter, r *http.Request) {
	c.deliveryPage(w, r, http.StatusOK, "")
}

func (c *cabinet) deliveryPage(w http.ResponseWriter, r *http.Request, status int, message string) {
	ep, d, ok := c.deliveryFromPath(w, r)
	if !ok {
		return
	}
	v := deliveryPage{Endpoint: ep, Delivery: d}
	if d.NextRetry != nil {
		v.NextRetry, v.RetryDue = *d.NextRetry, !d.NextRetry.After(c.Now())
	}
	c.render(w, r, status, "webhook_delivery", pageData{Title: "Webhook delivery", Nav: "webhooks", Message: message, Data: v})
}

// redeliver sends the delivery's event again to its endpoint (the API's
// redelivery, with its cap), as a new run of the delivery's workflow.
func (c *cabinet) redeliver(w http.ResponseWriter, r *http.Request) {
	ep, d, ok := c.deliveryFromPath(w, r)
	if !ok {
		return
	}
	u := user(r)
	sent, err := c.Webhooks.RedeliverTo(r.Context(), webhooks.Principal(u.CompanyID, ep.Environment), d.EventID, ep.ID)
	if err != nil {
		status, message, _, ok := refusal(err)
		if !ok {
			c.fail(w, r, err)
			return
		}
		var rate *errs.RateError
		if errors.As(err, &rate) {
			w.Header().Set("Retry-After", retryAfter(rate.Problem().RetryAfter))
		}
		c.deliveryPage(w, r, status, message)
		return
	}
	notice := "Sent again: a new attempt is under way."
	if len(sent.EndpointIDs) == 0 {
		notice = "This event has not gone out yet: it is sent shortly."
	}
	c.Log.InfoContext(r.Context(), "cabinet: webhook redelivered", "user_id", u.ID, "company_id", u.CompanyID,
		"endpoint_id", ep.ID, "event_id", d.EventID)
	c.done(w, r, endpointURL(ep.ID)+"/deliveries/"+d.EventID, notice)
}
