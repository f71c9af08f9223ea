package catalogfile

import (
	"bytes"
	_ "embed"
	"fmt"
	"text/template"
	"time"
)

//go:embed demo.json.tmpl
var demoTemplate string

// Demo returns the demo catalog with its events dated relative to now, so a
// freshly seeded stack always has events on sale.
func Demo(now time.Time) []byte {
	msk := time.FixedZone("MSK", 3*60*60)
	base := now.In(msk).Truncate(24 * time.Hour)
	tmpl := template.Must(template.New("demo").Funcs(template.FuncMap{
		"day": func(days int, clock string) string {
			hm, err := time.Parse("15:04", clock)
			if err != nil {
				panic(fmt.Sprintf("demo catalog: bad clock %q", clock))
			}
			t := time.Date(base.Year(), base.Month(), base.Day(), hm.Hour(), hm.Minute(), 0, 0, msk).AddDate(0, 0, days)
			return t.Format(time.RFC3339)
		},
	}).Parse(demoTemplate))
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, nil); err != nil {
		panic(fmt.Sprintf("demo catalog: %v", err))
	}
	return buf.Bytes()
}
