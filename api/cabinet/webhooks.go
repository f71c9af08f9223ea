package cabinet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
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

// Session keys: the endpoint whose new signing secret waits (sealed) for
// its page, and the create form's one-time token.
const (
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
	// PayloadWithheld: the body holds buyers' data the user's role may
	// not read in this environment (its Payload is emptied).
	PayloadWithheld bool
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
	t := newFormToken()
	c.sessions.Put(r.Context(), formTokenKey, t)
	return t
}

// newFormToken is a form's one-time token: 128 random bits in hex.
func newFormToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// formTokenRe is what newFormToken makes.
var formTokenRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

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
	if (form.Environment == apikey.Sandbox || form.Environment == apikey.Production) && c.manageRefused(w, r, form.Environment) {
		return
	}
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
		webhooks.EndpointInput{URL: &form.URL, Description: &form.Description, EventTypes: form.types(), CreationToken: token})
	var before *webhooks.CreatedBefore
	if errors.As(err, &before) {
		// The same form, sent again while the first was being made (the
		// session had not yet spent its token): the database's claim of
		// the token made one endpoint. Its page, without touching this
		// request's copy of the session, which would overwrite the one
		// holding the new secret.
		http.Redirect(w, r, endpointURL(before.ID), http.StatusSeeOther)
		return
	}
	if err != nil {
		if status, message, problems, ok := refusal(err); ok {
			refuse(status, message, problems)
			return
		}
		c.fail(w, r, err)
		return
	}
	c.sessions.Remove(r.Context(), formTokenKey)
	if err := c.showSecretOnce(w, r, e.ID, e.Secret); err != nil {
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet: webhook endpoint created", "user_id", u.ID, "company_id", u.CompanyID,
		"endpoint_id", e.ID, "environment", form.Environment)
	c.done(w, r, endpointURL(e.ID), fmt.Sprintf("Endpoint %d added: it receives %s events from now on.", e.ID, form.Environment))
}

// showSecretOnce keeps a new signing secret in the session for the next
// view of its endpoint's page, which takes it out.
func (c *cabinet) showSecretOnce(w http.ResponseWriter, r *http.Request, endpointID int64, secret string) error {
	c.sessions.Put(r.Context(), secretEndpointKey, endpointID)
	return c.seal(w, r, webhookSecretReveal(endpointURL(endpointID)), strconv.FormatInt(endpointID, 10), secret)
}

// webhookSecretReveal is where an endpoint's new secret waits (sealed,
// reveal.go) for the endpoint's page at path.
func webhookSecretReveal(path string) reveal { return revealFor("webhook_secret", path) }

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

// manageRefused answers 403, changing nothing, unless the user's role may
// manage the webhook endpoints of env (organizer.Role.MayManageWebhooks):
// a production endpoint receives every order with its buyer. Every action
// on endpoints asks it on the server; the pages only hide what it refuses.
func (c *cabinet) manageRefused(w http.ResponseWriter, r *http.Request, env string) bool {
	u := user(r)
	if u.Role.MayManageWebhooks(env) {
		return false
	}
	c.Log.InfoContext(r.Context(), "cabinet: webhook action refused", "user_id", u.ID, "company_id", u.CompanyID,
		"role", u.Role, "environment", env, "path", r.URL.Path)
	c.render(w, r, http.StatusForbidden, "error", pageData{Title: "Not allowed", Nav: "webhooks",
		Message: fmt.Sprintf("The %s role cannot add or change %s webhook endpoints: an endpoint receives every order with its "+
			"buyer's e-mail and phone. Nothing was changed. An owner can do this.", u.Role, env)})
	return true
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
	var shown func()
	if c.sessions.GetInt64(r.Context(), secretEndpointKey) == ep.ID {
		// Shown this once (a reload no longer has it), and only while it
		// still signs: a rotation since (another tab) makes it stale.
		rv := webhookSecretReveal(endpointURL(ep.ID))
		secret, _ := c.unseal(r, rv, strconv.FormatInt(ep.ID, 10))
		current, err := webhooks.IsCurrentSecret(r.Context(), c.DB, user(r).CompanyID, ep, secret)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if current && secret != "" {
			v.Secret = secret
		}
		// Out of the session once the page is rendered: a failure before
		// then leaves it for the next view.
		shown = func() {
			c.forget(w, r, rv)
			c.sessions.Remove(r.Context(), secretEndpointKey)
		}
	}
	message := ""
	if r.URL.Query().Get("rotate") == "refused" {
		message = overlapNotice(ep, companyZone(r))
	}
	c.endpointPage(w, r, http.StatusOK, message, ep, v, shown)
}

func (c *cabinet) endpointPage(w http.ResponseWriter, r *http.Request, status int, message string, ep *webhooks.CompanyEndpoint, v endpointPage, shown func()) {
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
	c.renderThen(w, r, status, "webhook", pageData{Title: "Webhook endpoint " + strconv.FormatInt(ep.ID, 10), Nav: "webhooks",
		Message: message, Data: v}, shown)
}

// endpointAction runs an action on the endpoint the path names through the
// service, as the endpoint's environment; success goes back to the
// endpoint's page with the notice act returns, and so does a refusal (a
// cap, a state), with the refusal as the notice: a reload repeats nothing.
// Only the edit form's bad input is answered in place (422, the form as
// sent).
func (c *cabinet) endpointAction(name string, act func(w http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ep, ok := c.endpointFromPath(w, r)
		if !ok || c.manageRefused(w, r, ep.Environment) {
			return
		}
		if c.Webhooks == nil {
			c.fail(w, r, errors.New("webhooks service not configured"))
			return
		}
		u := user(r)
		notice, err := act(w, r, webhooks.Principal(u.CompanyID, ep.Environment), ep)
		if err != nil {
			var fp *formProblems
			if errors.As(err, &fp) {
				c.endpointPage(w, r, http.StatusUnprocessableEntity, "Nothing was changed: correct the form.", ep,
					endpointPage{Form: fp.form, Problems: fp.problems}, nil)
				return
			}
			if errors.Is(err, errs.NotFound) {
				c.notFound(w, r)
				return
			}
			if errors.Is(err, webhooks.ErrSecretOverlap) {
				// Said by the page's address, not the session: this
				// request's copy of the session must not overwrite the
				// one a racing rotation saved with the new secret.
				http.Redirect(w, r, endpointURL(ep.ID)+"?rotate=refused", http.StatusSeeOther)
				return
			}
			status, message, problems, ok := refusal(err)
			if !ok {
				c.fail(w, r, err)
				return
			}
			if status == http.StatusUnprocessableEntity {
				form, _ := readEndpointForm(r)
				c.endpointPage(w, r, status, message, ep, endpointPage{Form: form, Problems: problems}, nil)
				return
			}
			c.done(w, r, endpointURL(ep.ID), message)
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
func (c *cabinet) editEndpoint(_ http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
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

// disableEndpoint stops deliveries to the endpoint; the reason says where
// and by which role, not who (the API shows it to the company's
// integrations; the log keeps the user).
func (c *cabinet) disableEndpoint(_ http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	off := false
	if _, err := c.Webhooks.Update(r.Context(), p, ep.ID, webhooks.EndpointInput{Enabled: &off,
		DisabledReason: "disabled in the cabinet by its " + string(user(r).Role)}); err != nil {
		return "", err
	}
	return "Endpoint disabled: it receives no events until it is enabled again.", nil
}

// enableEndpoint sends events to the endpoint again and clears why it was
// disabled and its failure streak.
func (c *cabinet) enableEndpoint(_ http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	on := true
	if _, err := c.Webhooks.Update(r.Context(), p, ep.ID, webhooks.EndpointInput{Enabled: &on}); err != nil {
		return "", err
	}
	return "Endpoint enabled: it receives new events from now on.", nil
}

// rotateSecret gives the endpoint a new secret, shown once on its page;
// the old one signs beside it for webhooks.SecretOverlap. Not again while
// that overlap runs: a second rotation (a double click) would end it at
// once.
func (c *cabinet) rotateSecret(w http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	e, err := c.Webhooks.RotateSecretAfterOverlap(r.Context(), p, ep.ID)
	if err != nil {
		return "", err
	}
	if err := c.showSecretOnce(w, r, e.ID, e.Secret); err != nil {
		return "", err
	}
	return fmt.Sprintf("New signing secret made. The old one keeps signing beside it for %d hours.",
		int(webhooks.SecretOverlap.Hours())), nil
}

// overlapNotice says why the secret was not rotated, and until when.
func overlapNotice(ep *webhooks.CompanyEndpoint, loc *time.Location) string {
	until := "its overlap ends"
	if ep.PreviousSecretExpiresAt != nil {
		until = inZone(*ep.PreviousSecretExpiresAt, loc, "2006-01-02 15:04")
	}
	return fmt.Sprintf("Not rotated again: the secret was rotated less than %d hours ago, and the one it replaced still signs "+
		"beside it. Rotate again after %s.", int(webhooks.SecretOverlap.Hours()), until)
}

// testEndpoint sends a webhook.test event to the endpoint (the API's test
// ping, with its per-minute cap).
func (c *cabinet) testEndpoint(_ http.ResponseWriter, r *http.Request, p *apikey.Principal, ep *webhooks.CompanyEndpoint) (string, error) {
	sent, err := c.Webhooks.Ping(r.Context(), p, ep.ID)
	if err != nil {
		return "", err
	}
	return "Test event " + sent.EventID + " sent: its delivery is listed below.", nil
}

// deliveryOf is the endpoint's delivery the path names (404 for any
// other); ep is the company's (endpointFromPath).
func (c *cabinet) deliveryOf(w http.ResponseWriter, r *http.Request, ep *webhooks.CompanyEndpoint) (*webhooks.DeliveryDetail, bool) {
	if c.Webhooks == nil {
		c.fail(w, r, errors.New("webhooks service not configured"))
		return nil, false
	}
	d, err := c.Webhooks.CompanyDelivery(r.Context(), user(r).CompanyID, ep, r.PathValue("event"))
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, false
	}
	return d, true
}

// webhookDeliveryPage shows one delivery: every attempt, when the next
// one is due, and the body sent if the user's role may read the
// environment's buyers (organizer.Role.MayReadWebhookPayloads).
func (c *cabinet) webhookDeliveryPage(w http.ResponseWriter, r *http.Request) {
	ep, ok := c.endpointFromPath(w, r)
	if !ok {
		return
	}
	d, ok := c.deliveryOf(w, r, ep)
	if !ok {
		return
	}
	v := deliveryPage{Endpoint: ep, Delivery: d}
	if !user(r).Role.MayReadWebhookPayloads(ep.Environment) {
		// Emptied here, so no template can show it.
		v.Delivery.Payload, v.PayloadWithheld = "", true
	}
	if d.NextRetry != nil {
		v.NextRetry, v.RetryDue = *d.NextRetry, !d.NextRetry.After(c.Now())
	}
	c.render(w, r, http.StatusOK, "webhook_delivery", pageData{Title: "Webhook delivery", Nav: "webhooks", Data: v})
}

// redeliver sends the delivery's event again to its endpoint (the API's
// redelivery, with its cap), as a new run of the delivery's workflow.
func (c *cabinet) redeliver(w http.ResponseWriter, r *http.Request) {
	ep, ok := c.endpointFromPath(w, r)
	if !ok || c.manageRefused(w, r, ep.Environment) {
		return
	}
	d, ok := c.deliveryOf(w, r, ep)
	if !ok {
		return
	}
	u := user(r)
	to := endpointURL(ep.ID) + "/deliveries/" + d.EventID
	sent, err := c.Webhooks.RedeliverTo(r.Context(), webhooks.Principal(u.CompanyID, ep.Environment), d.EventID, ep.ID)
	if errors.Is(err, errs.Unavailable) {
		// The delivery is pending again already: the worker's sweep
		// starts it when Temporal cannot now.
		c.Log.WarnContext(r.Context(), "cabinet: redelivery left to the sweep", "company_id", u.CompanyID,
			"endpoint_id", ep.ID, "event_id", d.EventID, "err", err)
		c.done(w, r, to, "Queued to be sent again: it is sent shortly.")
		return
	}
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		_, message, _, ok := refusal(err)
		if !ok {
			c.fail(w, r, err)
			return
		}
		// A refusal (a cap, a state) as the notice of the delivery's page:
		// a reload repeats nothing.
		c.done(w, r, to, message)
		return
	}
	notice := "Sent again: a new attempt is under way."
	if len(sent.EndpointIDs) == 0 {
		notice = "This event has not gone out yet: it is sent shortly."
	}
	c.Log.InfoContext(r.Context(), "cabinet: webhook redelivered", "user_id", u.ID, "company_id", u.CompanyID,
		"endpoint_id", ep.ID, "event_id", d.EventID)
	c.done(w, r, to, notice)
}
