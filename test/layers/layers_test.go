// Package layers keeps the import graph the architecture: a package imports
// only its own layer or lower ones, and the api's side never imports the
// worker's (nor the other way round).
package layers_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// layer of every package of the service, lowest first. A new package must
// be placed here.
var layer = map[string]int{
	"internal/states": 0, "internal/errs": 0, "internal/pricing": 0, "internal/mail": 0, "internal/ratelimit": 0, "store/migrations": 0,
	"store":           1,
	"internal/apikey": 2, "internal/requestlog": 2, "internal/metrics": 2, "internal/delivery": 2, "internal/payment": 2,
	"internal/catalog": 2, "internal/organizer": 2, "internal/catalog/catalogfile": 2, "workflows/contract": 2,
	"internal/config": 3, "internal/sales": 3, "internal/webhook": 3, "internal/app": 4, "internal/delivery/email": 3, "activities": 3, "api/request": 3,
	"api/reference": 0, "api/client": 0, "workflows": 4, "api/aggregator": 4, "api/cabinet": 4,
	"worker": 5, "api": 5,
	"cmd/api": 7, "api/client/example": 7, "cmd/worker": 7, "cmd/ticketctl": 7,
}

// side: the api process serves requests and starts workflows by name; the
// worker runs them. Neither links the other's code.
var side = map[string]string{
	"api": "api", "api/request": "api", "api/aggregator": "api", "api/reference": "api", "api/cabinet": "api",
	"workflows": "worker", "activities": "worker", "worker": "worker", "internal/delivery/email": "worker",
}

func TestImportsFollowTheLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "ticketsales/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, "ticketsales/")
		if strings.HasPrefix(name, "test/") {
			continue // harnesses may use anything
		}
		from, ok := layer[name]
		if !ok {
			t.Errorf("%s has no layer: place it in test/layers", name)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, "ticketsales/")
			if !ours {
				continue
			}
			to, ok := layer[dep]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no layer", name, dep)
			case to > from:
				t.Errorf("%s (layer %d) imports %s (layer %d): a lower layer must not import a higher one", name, from, dep, to)
			case side[name] != "" && side[dep] != "" && side[name] != side[dep]:
				t.Errorf("%s (the %s's) imports %s (the %s's)", name, side[name], dep, side[dep])
			}
		}
	}
	if checked < len(layer) {
		t.Errorf("checked %d packages of %d placed: go list saw fewer than expected", checked, len(layer))
	}
}
