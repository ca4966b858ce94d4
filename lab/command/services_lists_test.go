package command

import (
	"reflect"
	"testing"

	"github.com/mqlab/mqlab/lab/services"
)

// The modes and strategies the parser accepts are the ones lab/services
// knows, in the same order, so the two lists cannot drift apart.
func TestServiceOptionListsMatchServices(t *testing.T) {
	strs := func(list any) []string {
		var out []string
		v := reflect.ValueOf(list)
		for i := 0; i < v.Len(); i++ {
			out = append(out, v.Index(i).String())
		}
		return out
	}
	cases := []struct {
		service, key string
		want         []string
	}{
		{"orders", "mode", strs(services.OrdersModes)},
		{"checkout", "mode", strs(services.CheckoutModes)},
		{"wallet", "strategy", strs(services.Strategies)},
	}
	for _, tc := range cases {
		if got := serviceModes[tc.service][tc.key]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s=: the parser takes %v, lab/services has %v", tc.service, tc.key, got, tc.want)
		}
		for _, v := range tc.want {
			line := "service start " + tc.service + " " + tc.key + "=" + v
			if _, err := Parse(line); err != nil {
				t.Errorf("%s: %v", line, err)
			}
		}
	}
	// Every service takes exactly the options listed for it, and nothing
	// else names a service the parser does not know.
	if len(serviceModes) != len(Services) {
		t.Errorf("serviceModes has %d services, Services %d", len(serviceModes), len(Services))
	}
	for _, s := range Services {
		if _, ok := serviceModes[s]; !ok {
			t.Errorf("serviceModes has no entry for %s", s)
		}
	}
}
