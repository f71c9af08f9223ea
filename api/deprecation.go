package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// minSunset is how long a deprecated behaviour lives at least after it is
// marked (docs/api.md, Compatibility and versioning).
const minSunset = 6 * 30 * 24 * time.Hour

// deprecated marks op as on its way out, the one way the policy allows: the
// document says `deprecated: true` and when it ends, and every answer
// carries Deprecation (RFC 9745: since when), Sunset (RFC 8594: when it
// stops) and a Link to where the replacement is described, so a partner's
// monitoring sees it long before it goes. A sunset sooner than six months
// after the deprecation is a mistake of ours, refused at start.
func deprecated(op huma.Operation, since, sunset time.Time, instead string) huma.Operation {
	if sunset.Sub(since) < minSunset {
		panic(fmt.Sprintf("operation %s: sunset %s is less than six months after its deprecation %s",
			op.OperationID, sunset.Format(time.DateOnly), since.Format(time.DateOnly)))
	}
	op.Deprecated = true
	op.Description += fmt.Sprintf("\n\n**Deprecated** since %s; it stops on %s. %s",
		since.UTC().Format(time.DateOnly), sunset.UTC().Format(time.DateOnly), instead)
	deprecation := "@" + strconv.FormatInt(since.Unix(), 10)
	end := sunset.UTC().Format(http.TimeFormat)
	op.Middlewares = append(op.Middlewares, func(ctx huma.Context, next func(huma.Context)) {
		ctx.SetHeader("Deprecation", deprecation)
		ctx.SetHeader("Sunset", end)
		ctx.AppendHeader("Link", `</docs#/operations/`+op.OperationID+`>; rel="deprecation"`)
		next(ctx)
	})
	return op
}
