//go:build ignore

// Starter for the poison challenge, with franz-go. Run it from mqlab's
// folder with:
//
//	mqlab challenge poison -- go run lessons/challenge/poison/consumer.go
//
// Each order's value is "order 17 amount=450". A few orders carry an
// amount nobody can read, and as written the consumer tries such an order
// again and again, forever, and every order behind it waits. Try a few
// times, then park the order in the dead-letter topic MQLAB_DEAD_LETTERS
// and go on.
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
			// TODO: give up after a few tries: park the record in the
			// topic MQLAB_DEAD_LETTERS, and commit past it.
			for {
				err := bill(string(r.Value), work)
				if err == nil {
					break
				}
				log.Printf("%s: %v; trying again", r.Key, err)
				fmt.Printf("failed %s\n", r.Key)
			}
			fmt.Printf("processed %s\n", r.Key)
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
		})
	}
}

// bill does an order's work: it reads the amount and charges it.
func bill(value string, work time.Duration) error {
	time.Sleep(work)
	_, field, _ := strings.Cut(value, "amount=")
	if _, err := strconv.Atoi(field); err != nil {
		return fmt.Errorf("the amount %q is not a number", field)
	}
	return nil
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
