//go:build ignore

// Starter for the effect-once challenge, with franz-go and SQLite. Run it
// from mqlab's folder with:
//
//	mqlab challenge effect-once -- go run lessons/challenge/effect-once/consumer.go
//
// Each order must be charged ₹450 exactly once in the charges table of
// the database MQLAB_DB names. As written it processes at least once, so
// an order redelivered after a kill between its charge and its commit is
// charged again: make the second delivery charge nothing.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite"
)

func main() {
	work := millis("MQLAB_WORK_MS")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
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
			time.Sleep(work)
			if err := charge(db, string(r.Key)); err != nil {
				log.Fatalf("charge %s: %v", r.Key, err) // not committed: it comes again
			}
			fmt.Printf("processed %s\n", r.Key)
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
		})
	}
}

// charge charges the order ₹450.
// TODO: remember, in the same transaction as the charge, that this order
// was charged, and charge nothing when it comes again.
func charge(db *sql.DB, key string) error {
	_, err := db.Exec(`INSERT INTO charges (order_key, amount) VALUES (?, 450)`, key)
	return err
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
