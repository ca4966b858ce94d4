package panel

import (
	"strings"

	"github.com/mqlab/mqlab/tui/draw"
	"github.com/mqlab/mqlab/tui/view"
)

// The Kafka listener as the screen shows it: the address to point a
// client at, in the header, and the clients connected, under the nodes.

// KafkaSeed is the first address of the bootstrap list: one is enough
// for a client, and it fits a header.
func KafkaSeed(k *view.Kafka) string {
	seed, _, _ := strings.Cut(k.Bootstrap, ",")
	return seed
}

// kafkaRow lists the Kafka clients connected, by client.id.
func kafkaRow(st *draw.Styles, k *view.Kafka, w int) string {
	var l draw.Line
	l.Add(&st.Accent, "Kafka ")
	l.Add(&st.Text, KafkaSeed(k))
	if len(k.Clients) == 0 {
		// Every node's address when the row has room, so a client started
		// while one node is down still finds the others.
		// Where neither fits, the row says only that none is connected
		// rather than cut the command it suggests.
		none := " · no client connected"
		for _, hint := range []string{none + " · try  kcat -b " + k.Bootstrap + " -L", none + " · try  kcat -b " + KafkaSeed(k) + " -L", none} {
			if l.Width()+draw.Width(hint) <= w {
				l.Add(&st.Muted, hint)
				break
			}
		}
		return l.Fit(w)
	}
	l.Add(&st.Muted, " · clients ")
	for i, c := range k.Clients {
		if i > 0 {
			l.Add(&st.Faint, ", ")
		}
		l.Add(&st.Text, c.ID)
		if c.Software != "" {
			l.Add(&st.Muted, " ("+c.Software+")")
		}
	}
	return l.Fit(w)
}
