package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/states"
)

type gatewayCallbackInput struct {
	Signature string `header:"X-Gateway-Signature" required:"true"`
	RawBody   []byte
}

// registerGatewayCallbacks takes the gateways' signed payment reports: the
// hosted provider's (when one is configured) and the test gateway's (when it
// is mounted), each verified with its own key. A report is acknowledged once
// it is on record (orders.Service.ReceivePayment); a failure to record answers 5xx so
// the gateway reports again.
func (s *Server) registerGatewayCallbacks(api huma.API) {
	register := func(opID, path, name string, key []byte) {
		huma.Register(api, huma.Operation{
			OperationID: opID, Method: http.MethodPost, Path: path, Tags: []string{"Gateway"},
			Summary: "Payment result from the gateway (HMAC-signed)", DefaultStatus: http.StatusNoContent, Hidden: true,
			Errors: []int{http.StatusUnauthorized, http.StatusBadRequest},
		}, func(ctx context.Context, in *gatewayCallbackInput) (*struct{}, error) {
			if !payment.Verify(key, in.RawBody, in.Signature) {
				return nil, newProblem(ctx, http.StatusUnauthorized, "unauthenticated", "Bad callback signature.")
			}
			var cb payment.Callback
			if err := json.Unmarshal(in.RawBody, &cb); err != nil || cb.OrderID == 0 || cb.PaymentID == "" ||
				(cb.Status != states.GatewayPaid && cb.Status != states.GatewayDeclined) || cb.Amount < 0 {
				return nil, newProblem(ctx, http.StatusBadRequest, "malformed_request", "Bad callback body.")
			}
			if err := s.deps.Orders.ReceivePayment(ctx, name, cb); err != nil {
				return nil, err
			}
			return nil, nil
		})
	}
	if s.deps.HostedGateway {
		register("gateway-callback", payment.CallbackPath, payment.Hosted, s.deps.GatewaySecret)
	}
	if s.deps.Gateway != nil {
		register("test-gateway-callback", payment.TestCallbackPath, payment.Test, payment.TestCallbackKey(s.deps.GatewaySecret))
	}
}
