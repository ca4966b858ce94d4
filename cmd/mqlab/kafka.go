package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/mqlab/mqlab/lab/command"
)

// labFlags are the flags of the commands that open a lab on screen.
type labFlags struct {
	timing string
	kafka  kafkaFlag
	sqs    sqsFlag
	keep   string // --keep-logs
}

// kafkaFlag is --kafka[=ADDR]: the Kafka protocol on every node, n1 at
// ADDR (default 127.0.0.1:9092), nI on the port I-1 above it.
type kafkaFlag struct{ listen *command.KafkaListen }

const kafkaFlagUsage = "speak the Kafka protocol on every node for real clients (kcat, kafka-python…): n1 on ADDR, default 127.0.0.1:9092, nI on the port I-1 above"

func addKafkaFlag(fs *pflag.FlagSet, f *kafkaFlag) {
	fs.Var(f, "kafka", kafkaFlagUsage)
	fs.Lookup("kafka").NoOptDefVal = "127.0.0.1:9092"
}

func (f *kafkaFlag) String() string {
	if f.listen == nil {
		return ""
	}
	return net.JoinHostPort(f.listen.Host, strconv.Itoa(f.listen.Port))
}

func (f *kafkaFlag) Type() string { return "ADDR" }

// Set reads HOST:PORT, :PORT or PORT.
func (f *kafkaFlag) Set(v string) error {
	host, port := "", v
	if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: give HOST:PORT, :PORT or PORT with a port from 1 to 65535, e.g. 127.0.0.1:9092", v)
	}
	f.listen = &command.KafkaListen{Host: host, Port: n}
	return nil
}
