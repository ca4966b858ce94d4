package tui

import (
	"strings"

	"github.com/mqlab/mqlab/tui/view"
)

// The Kafka listener as the screen shows it: the address to point a
// client at, in the header, and the clients connected, under the nodes.

// kafkaSeed is the first address of the bootstrap list: one is enough
// for a client, and it fits a header.
func kafkaSeed(k *view.Kafka) string {
	seed, _, _ := strings.Cut(k.Bootstrap, ",")
	return seed
}

// kafkaRow lists the Kafka clients connected, by client.id.
func kafkaRow(st *Styles, k *view.Kafka, w int) string {
	var l line
	l.add(&st.Accent, "Kafka ")
	l.add(&st.Text, kafkaSeed(k))
	if len(k.Clients) == 0 {
		l.add(&st.Muted, " · no client connected · try  kcat -b "+kafkaSeed(k)+" -L")
		return l.fit(w)
	}
	l.add(&st.Muted, " · clients ")
	for i, c := range k.Clients {
		if i > 0 {
			l.add(&st.Faint, ", ")
		}
		l.add(&st.Text, c.ID)
		if c.Software != "" {
			l.add(&st.Muted, " ("+c.Software+")")
		}
	}
	return l.fit(w)
}
