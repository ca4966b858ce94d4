package command

// The listener commands: real clients' protocols (Kafka's, Amazon SQS's)
// on every node.

import "strconv"

// AnyPort is a listener's port for "any free ones" (written port=0).
const AnyPort = -1

// KafkaListen puts the Kafka protocol on every node: n1 on Port, nI on
// Port+I-1. Zero values mean the defaults (9092, 127.0.0.1); AnyPort
// (written port=0) picks free ports.
type KafkaListen struct {
	Port       int
	Host       string
	AutoCreate bool
}

func (KafkaListen) Name() string { return "kafka listen" }
func (c KafkaListen) String() string {
	return words("kafka", "listen").optIf(c.Port != 0, "port", strconv.Itoa(max(c.Port, 0))).optIf(c.Host != "", "host", quoteText(c.Host)).
		optIf(c.AutoCreate, "auto-create", "true").String()
}

func buildKafkaListen(p *parser, _ *Spec) (Command, *posError) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	port, host := listenAddr(o)
	return KafkaListen{Port: port, Host: host, AutoCreate: o.bool("auto-create")}, nil
}

// KafkaStop closes the Kafka listeners.
type KafkaStop struct{}

func (KafkaStop) Name() string   { return "kafka stop" }
func (KafkaStop) String() string { return "kafka stop" }

// SQSListen puts Amazon SQS's API on every node: n1 on Port, nI on
// Port+I-1. Zero values mean the defaults (9324, 127.0.0.1); AnyPort
// (written port=0) picks free ports.
type SQSListen struct {
	Port int
	Host string
}

func (SQSListen) Name() string { return "sqs listen" }
func (c SQSListen) String() string {
	return words("sqs", "listen").optIf(c.Port != 0, "port", strconv.Itoa(max(c.Port, 0))).optIf(c.Host != "", "host", quoteText(c.Host)).String()
}

func buildSQSListen(p *parser, _ *Spec) (Command, *posError) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	port, host := listenAddr(o)
	return SQSListen{Port: port, Host: host}, nil
}

// listenAddr reads a listen command's port= and host=; port=0 is AnyPort,
// and zero values are the defaults.
func listenAddr(o opts) (port int, host string) {
	port = o.int("port", 0)
	if o.has("port") && port == 0 {
		port = AnyPort
	}
	host, _ = o.text("host")
	return port, host
}

// SQSStop closes the SQS listeners.
type SQSStop struct{}

func (SQSStop) Name() string   { return "sqs stop" }
func (SQSStop) String() string { return "sqs stop" }
