//go:build ignore

// A consumer that commits each order before it finishes it: at most
// once. A crash between the two loses the order, and the challenge must
// fail it.
//
//	go run lessons/challenges/at-least-once/naive.go
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	work := millis("MQLAB_WORK_MS")
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Getenv("MQLAB_BOOTSTRAP"), ",")...),
		kgo.ClientID(os.Getenv("MQLAB_CLIENT_ID")),
		kgo.ConsumerGroup(os.Getenv("MQLAB_GROUP")),
		kgo.ConsumeTopics(os.Getenv("MQLAB_TOPIC")),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(millis("MQLAB_SESSION_MS")),
		kgo.HeartbeatInterval(millis("MQLAB_SESSION_MS")/10),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for {
		fetches := cl.PollFetches(ctx)
		fetches.EachError(func(topic string, p int32, err error) { log.Printf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
			time.Sleep(work) // the order's work, after the commit
			fmt.Printf("processed %s\n", r.Key)
		})
	}
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
