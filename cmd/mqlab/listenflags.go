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
type kafkaFlag = listenFlag[command.KafkaListen]

// sqsFlag is --sqs[=ADDR]: Amazon SQS's API on every node, n1 at ADDR
// (default 127.0.0.1:9324), nI on the port I-1 above it.
type sqsFlag = listenFlag[command.SQSListen]

const kafkaFlagUsage = "speak the Kafka protocol on every node for real clients (kcat, kafka-python…): n1 on ADDR, default 127.0.0.1:9092, nI on the port I-1 above"

const sqsFlagUsage = "answer Amazon SQS's API on every node for real clients (boto3, the AWS CLI, the SDKs): n1 on ADDR, default 127.0.0.1:9324, nI on the port I-1 above"

func addKafkaFlag(fs *pflag.FlagSet, f *kafkaFlag) {
	f.bare = "127.0.0.1:9092"
	f.make = func(host string, port int) command.KafkaListen { return command.KafkaListen{Host: host, Port: port} }
	addListenFlag(fs, f, "kafka", kafkaFlagUsage)
}

func addSQSFlag(fs *pflag.FlagSet, f *sqsFlag) {
	f.bare = "127.0.0.1:9324"
	f.make = func(host string, port int) command.SQSListen { return command.SQSListen{Host: host, Port: port} }
	addListenFlag(fs, f, "sqs", sqsFlagUsage)
}

// listenFlag is a flag that puts a listener on every node at the address
// it is given: n1 at ADDR, nI on the port I-1 above it. listen stays nil
// until the flag is set.
type listenFlag[L any] struct {
	listen *L
	host   string
	port   int
	bare   string                        // ADDR when the flag stands without one
	make   func(host string, port int) L // the listen command for an address
}

func addListenFlag[L any](fs *pflag.FlagSet, f *listenFlag[L], name, usage string) {
	fs.Var(f, name, usage)
	fs.Lookup(name).NoOptDefVal = f.bare
}

func (f *listenFlag[L]) String() string {
	if f.listen == nil {
		return ""
	}
	return net.JoinHostPort(f.host, strconv.Itoa(f.port))
}

func (f *listenFlag[L]) Type() string { return "ADDR" }

// Set reads HOST:PORT, :PORT or PORT.
func (f *listenFlag[L]) Set(v string) error {
	host, port := "", v
	if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: give HOST:PORT, :PORT or PORT with a port from 1 to 65535, e.g. %s", v, f.bare)
	}
	l := f.make(host, n)
	f.listen, f.host, f.port = &l, host, n
	return nil
}
