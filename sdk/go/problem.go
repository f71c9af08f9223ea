package ticketsales

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// Error makes the API's problem (RFC 9457, application/problem+json) an
// error: "ticketsales: 409 seat_taken: <detail> (request req_…)". Tell
// problems apart by Code, never by the text; quote RequestId to support.
func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ticketsales: %d %s: ", p.Status, p.Code)
	if p.Detail != nil && *p.Detail != "" {
		b.WriteString(*p.Detail)
	} else {
		b.WriteString(p.Title)
	}
	if p.Errors != nil {
		for _, e := range *p.Errors {
			b.WriteString("; ")
			if e.Location != nil {
				b.WriteString(*e.Location + ": ")
			}
			if e.Message != nil {
				b.WriteString(*e.Message)
			}
		}
	}
	if p.RequestId != "" {
		fmt.Fprintf(&b, " (request %s)", p.RequestId)
	}
	return b.String()
}

// Response is what every generated XxxResponse has.
type Response interface {
	StatusCode() int
	ContentType() string
	GetBody() []byte
}

// ResponseError is nil for an answer below 400 (a success, a 304), and
// otherwise the answer's [*Problem]. An answer that is not a problem (an
// HTML page from a proxy in between) becomes a Problem with its status,
// Code "error" and the start of its body as Detail, so errors.As finds a
// *Problem for every answer that failed.
func ResponseError(res Response) error {
	status := res.StatusCode()
	if status < 400 {
		return nil
	}
	var p Problem
	mt, _, _ := mime.ParseMediaType(res.ContentType())
	if (mt == "application/problem+json" || mt == "application/json") && json.Unmarshal(res.GetBody(), &p) == nil && p.Code != "" {
		if p.Status == 0 {
			p.Status = int64(status)
		}
		return &p
	}
	detail := string(res.GetBody())
	if len(detail) > 300 {
		detail = detail[:300]
	}
	return &Problem{Status: int64(status), Title: http.StatusText(status), Code: ProblemCodeError, Type: "about:blank", Detail: &detail}
}

// Check passes on a generated call's result, an error for anything but a
// success: the call's own error (the network, the context), or the
// answer's [*Problem]:
//
//	res, err := ticketsales.Check(c.CreateOrderWithResponse(ctx, &ticketsales.CreateOrderParams{}, in))
//	var p *ticketsales.Problem
//	if errors.As(err, &p) && p.Code == ticketsales.ProblemCodeSoldOut { … }
func Check[R Response](res R, err error) (R, error) {
	if err != nil {
		return res, err
	}
	return res, ResponseError(res)
}
