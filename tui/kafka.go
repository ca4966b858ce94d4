package tui

import (
	"strings"

	"github.com/mqlab/mqlab/lab"
)

// The Kafka listener as the screen shows it: the address to point a
// client at, in the header, and the clients connected, under the nodes.

func kafkaOf(snap *lab.Snapshot) *Kafka {
	if snap.Kafka == nil {
		return nil
	}
	k := &Kafka{Bootstrap: snap.Kafka.Bootstrap}
	for _, c := range snap.Kafka.Clients {
		k.Clients = append(k.Clients, KafkaClient{ID: c.ID, Software: c.Software})
	}
	return k
}

// kafkaSeed is the first address of the bootstrap list: one is enough
// for a client, and it fits a header.
func kafkaSeed(k *Kafka) string {
	seed, _, _ := strings.Cut(k.Bootstrap, ",")
	return seed
}

// kafkaRow lists the Kafka clients connected, by client.id.
func kafkaRow(st *Styles, k *Kafka, w int) string {
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
