package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/mqlab/mqlab/lab/command"
)

// sqsFlag is --sqs[=ADDR]: Amazon SQS's API on every node, n1 at ADDR
// (default 127.0.0.1:9324), nI on the port I-1 above it.
type sqsFlag struct{ listen *command.SQSListen }

const sqsFlagUsage = "answer Amazon SQS's API on every node for real clients (boto3, the AWS CLI, the SDKs): n1 on ADDR, default 127.0.0.1:9324, nI on the port I-1 above"

func addSQSFlag(fs *pflag.FlagSet, f *sqsFlag) {
	fs.Var(f, "sqs", sqsFlagUsage)
	fs.Lookup("sqs").NoOptDefVal = "127.0.0.1:9324"
}

func (f *sqsFlag) String() string {
	if f.listen == nil {
		return ""
	}
	return net.JoinHostPort(f.listen.Host, strconv.Itoa(f.listen.Port))
}

func (f *sqsFlag) Type() string { return "ADDR" }

// Set reads HOST:PORT, :PORT or PORT.
func (f *sqsFlag) Set(v string) error {
	host, port := "", v
	if h, p, err := net.SplitHostPort(v); err == nil {
		host, port = h, p
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: give HOST:PORT, :PORT or PORT with a port from 1 to 65535, e.g. 127.0.0.1:9324", v)
	}
	f.listen = &command.SQSListen{Host: host, Port: n}
	return nil
}
